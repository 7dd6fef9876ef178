// ordo — word alignments from cross-attention (DecodeOptions::return_attention), the way
// Marian prints them with --alignment: which source piece (or word) each target piece (or
// word) comes from. Subtitle, markup and terminology tools are built on them.
//
// Indices count the pieces of the text only: source index i is result.source_tokens at
// result.source_text_positions[i] (a language code, BART's <s> and the final </s> are left out), target
// index j is hyp.tokens[j] (the final </s> and a forced language code are left out). The
// weights are the alignment layer's head mean (Attention::averaged).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ordo/export.h"
#include "ordo/options.h"

namespace ordo {

struct AlignmentLink {
  int64_t source = 0, target = 0;
};

// Hard: each target piece linked to the source piece it attends to most (ties: the first),
// ordered by target. Empty when the hypothesis carries no attention.
ORDO_API std::vector<AlignmentLink> hard_alignment(const TranslationResult& result, const Hypothesis& hyp);

// Soft: weights[target piece][source piece], the averaged attention over the text's pieces
// (the share given to special tokens is left out, rows are not renormalized).
ORDO_API std::vector<std::vector<float>> soft_alignment(const TranslationResult& result, const Hypothesis& hyp);

// Word indices of pieces: a piece starting with "▁" (SentencePiece) starts a word, as does the
// piece after one ending in "</w>" (BPE, FSMT); the first piece starts word 0.
ORDO_API std::vector<int64_t> word_indices(const std::vector<std::string>& pieces);

// Hard alignment between words: two words are linked when any of their pieces are (the
// usual rule for turning subword alignments into word alignments), sorted and unique.
ORDO_API std::vector<AlignmentLink> word_alignment(const TranslationResult& result, const Hypothesis& hyp);

}  // namespace ordo
