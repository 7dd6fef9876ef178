#include "pipeline/vocab_map.h"

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "io/file.h"
#include "ordo/error.h"
#include "ordo/text.h"

namespace ordo::pipeline {
namespace {

std::vector<std::string> split_spaces(const std::string& text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(' ', at), text.size());
    if (end > at) out.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

}  // namespace

// Pieces the tokenizer has no text for (ids past its vocabulary in a padded embedding table)
// are left out; the lowest id wins a piece two ids share.
PieceIds source_piece_ids(const text::Tokenizer& tokenizer, int64_t vocab) {
  PieceIds out;
  const int64_t limit = std::min(vocab, tokenizer.source_id_range().limit);
  for (int64_t id = limit - 1; id >= 0; --id) {
    try {
      out[tokenizer.source_piece(id)] = id;
    } catch (const Error&) {
    }
  }
  return out;
}

PieceIds target_piece_ids(const text::Tokenizer& tokenizer, int64_t vocab) {
  PieceIds out;
  for (int64_t id = vocab - 1; id >= 0; --id) {
    try {
      out[tokenizer.target_piece(id)] = id;
    } catch (const Error&) {
    }
  }
  return out;
}

VocabMap VocabMap::load(const std::string& path, const text::Tokenizer& tokenizer, int64_t source_vocab,
                        int64_t target_vocab) {
  // A regular file only, opened without blocking: a FIFO would hang the call (and, in a server,
  // the HTTP thread waiting for it past its timeout), a directory would read as no lines.
  std::string content = io::read_regular_file(
      io::require_regular_file(path, "use_vmap reads the model's vocabulary map; build one with ordo-vmap"));
  drop_byte_order_mark(content);
  const PieceIds source_ids = source_piece_ids(tokenizer, source_vocab);
  const PieceIds target_ids = target_piece_ids(tokenizer, target_vocab);
  VocabMap map;
  map.path_ = path;
  map.target_vocab_ = target_vocab;
  std::istringstream in(content);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::string where = path + ":" + std::to_string(number);
    const size_t tab = line.find('\t');
    if (tab == std::string::npos) throw Error(where + ": no tab (each line is: source pieces TAB target pieces)");
    std::vector<int64_t> key;
    for (const std::string& piece : split_spaces(line.substr(0, tab))) {
      const auto found = source_ids.find(piece);
      if (found == source_ids.end())
        throw Error(where + ": source piece '" + piece + "' is not in the model's vocabulary");
      key.push_back(found->second);
    }
    std::vector<int64_t> targets;
    for (const std::string& piece : split_spaces(line.substr(tab + 1))) {
      const auto found = target_ids.find(piece);
      if (found == target_ids.end())
        throw Error(where + ": target piece '" + piece + "' is not in the model's target vocabulary");
      targets.push_back(found->second);
    }
    std::vector<int64_t>& into = key.empty() ? map.always_ : map.targets_[key];
    into.insert(into.end(), targets.begin(), targets.end());
    map.longest_key_ = std::max(map.longest_key_, key.size());
    ++map.entries_;
  }
  // An empty map would leave every batch only the special tokens: every translation empty.
  if (map.entries_ == 0)
    throw Error(path +
                ": the vocabulary map has no entries (use_vmap needs lines 'source pieces TAB target pieces'; "
                "build one with ordo-vmap)");
  return map;
}

std::vector<int64_t> VocabMap::candidates(const std::vector<const std::vector<int64_t>*>& sources,
                                          const std::vector<int64_t>& specials) const {
  std::vector<char> in(static_cast<size_t>(target_vocab_), 0);
  const auto add = [&](const std::vector<int64_t>& ids) {
    for (int64_t id : ids)
      if (id >= 0 && id < target_vocab_) in[static_cast<size_t>(id)] = 1;
  };
  add(always_);
  add(specials);
  std::vector<int64_t> key;
  for (const std::vector<int64_t>* source : sources)
    for (size_t begin = 0; begin < source->size(); ++begin)
      for (size_t n = 1; n <= longest_key_ && begin + n <= source->size(); ++n) {
        key.assign(source->begin() + static_cast<std::ptrdiff_t>(begin),
                   source->begin() + static_cast<std::ptrdiff_t>(begin + n));
        if (const auto found = targets_.find(key); found != targets_.end()) add(found->second);
      }
  std::vector<int64_t> out;
  for (size_t id = 0; id < in.size(); ++id)
    if (in[id]) out.push_back(static_cast<int64_t>(id));
  return out;
}

}  // namespace ordo::pipeline
