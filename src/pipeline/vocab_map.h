// A vocabulary shortlist (CTranslate2's vmap, DecodeOptions::use_vmap): a source -> target
// lexical map that gives each batch a small set of candidate target tokens, so that the output
// projection (about half a decoder step's multiply-adds at a 58k vocabulary) computes only
// their rows. The search sees full-width logits with -inf outside the set: nothing else
// changes, and without the option nothing is computed differently.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "text/tokenizer.h"

namespace ordo::pipeline {

// Piece -> id of the model's source and target vocabularies (the tokenizer's pieces, specials
// included), as vmap.txt names them.
using PieceIds = std::unordered_map<std::string, int64_t>;
PieceIds source_piece_ids(const text::Tokenizer& tokenizer, int64_t vocab);
PieceIds target_piece_ids(const text::Tokenizer& tokenizer, int64_t vocab);

class VocabMap {
 public:
  // Reads CTranslate2's vmap.txt: per line "source pieces<TAB>target pieces", each side
  // separated by spaces; a key of several pieces is an n-gram of consecutive source pieces, an
  // empty key gives targets every batch gets. Pieces are the model's ("▁Haus"). Throws
  // ordo::Error naming the file and line of a malformed line or a piece the model lacks, and
  // naming the file when it is not a regular file (a directory, a FIFO) or has no entries.
  static VocabMap load(const std::string& path, const text::Tokenizer& tokenizer, int64_t source_vocab,
                       int64_t target_vocab);

  // The sorted target ids a batch of sources may produce: the always-included ones, the
  // targets of every source n-gram found, and `specials` (eos, pad, forced tokens, prefixes).
  std::vector<int64_t> candidates(const std::vector<const std::vector<int64_t>*>& sources,
                                  const std::vector<int64_t>& specials) const;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int64_t target_vocab_ = 0;
  std::vector<int64_t> always_;
  std::map<std::vector<int64_t>, std::vector<int64_t>> targets_;  // source id n-gram -> target ids
  size_t longest_key_ = 0;
  size_t entries_ = 0;  // lines read
};

}  // namespace ordo::pipeline
