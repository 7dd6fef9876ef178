#include "text/spm_tokenizer.h"

#include <set>

#include "ordo/error.h"

namespace ordo::text {

SpmTokenizer::SpmTokenizer(const std::string& dir, const std::string& spm_file, const std::string& why)
    : dir_(dir), spm_(require_file(dir + "/" + spm_file, why)), clean_up_spaces_(clean_up_spaces(dir)) {}

std::vector<std::string> SpmTokenizer::tokenize(const std::string& text) const {
  check_utf8(text, "input text");
  std::vector<std::string> tokens;
  for (const std::string& chunk : split_on_special_tokens(text, specials_)) {
    if (specials_.contains(chunk)) {
      tokens.push_back(chunk);
      continue;
    }
    for (std::string& piece : spm_.encode(chunk)) tokens.push_back(std::move(piece));
  }
  return tokens;
}

std::vector<int64_t> SpmTokenizer::encode(const std::string& text, const std::string& source_lang) const {
  std::vector<int64_t> ids;
  std::optional<int64_t> lang;
  if (!language_ids_.empty()) {
    lang = language_id(source_lang);
    if (!lang) throw Error(dir_ + ": unknown source language '" + source_lang + "' (known: " + language_list() + ")");
    if (!language_after_eos_) ids.push_back(*lang);
  }
  for (const std::string& piece : tokenize(text)) ids.push_back(piece_to_id(piece));
  ids.push_back(eos_id_);
  if (lang && language_after_eos_) ids.push_back(*lang);
  return ids;
}

std::vector<std::string> SpmTokenizer::id_to_pieces(const std::vector<int64_t>& ids) const {
  // skip_special_tokens: the ids of every special token (languages included) are dropped.
  std::set<int64_t> special_ids;
  for (const std::string& s : specials_.tokens) special_ids.insert(piece_to_id(s));
  std::vector<std::string> pieces;
  for (int64_t id : ids)
    if (!special_ids.count(id)) pieces.push_back(id_to_piece(id));
  return pieces;
}

std::string SpmTokenizer::decode(const std::vector<int64_t>& ids) const {
  const std::string text = pieces_to_text(id_to_pieces(ids), specials_, spm_, "");
  return clean_up_spaces_ ? clean_up_tokenization(text) : text;
}

std::optional<int64_t> SpmTokenizer::language_id(const std::string& lang) const {
  for (const std::string& token : {lang, language_token(lang)}) {
    const auto it = language_ids_.find(token);
    if (it != language_ids_.end()) return it->second;
  }
  return std::nullopt;
}

std::vector<std::string> SpmTokenizer::languages() const {
  std::vector<std::string> out;
  for (const auto& [token, id] : language_ids_) out.push_back(token);
  return out;
}

}  // namespace ordo::text
