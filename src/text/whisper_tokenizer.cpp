#include "text/whisper_tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "io/json_file.h"
#include "ordo/error.h"
#include "text/icu_text.h"

namespace ordo::text {
namespace {

constexpr const char* kNeeds = "Whisper models need vocab.json and merges.txt (GPT-2 byte-level BPE)";

// A list of special tokens as HF reads it (additional_special_tokens): a string is stripped
// on both sides when met in the text, an AddedToken object by its lstrip/rstrip.
std::vector<ConfigToken> token_list(const nlohmann::json& object, const std::string& path, const std::string& key) {
  const io::JsonFields fields(object, path);
  if (!fields.has(key)) return {};
  const nlohmann::json& list = object.at(key);
  if (!list.is_array()) fields.fail(key, "must be a list of tokens");
  std::vector<ConfigToken> out;
  for (const nlohmann::json& item : list) {
    const nlohmann::json holder = {{key, item}};
    const std::optional<ConfigToken> token = item.is_null() ? std::nullopt : config_token(holder, path, key);
    if (!token) fields.fail(key, "must be a list of strings or AddedToken objects, found element " + item.dump());
    out.push_back(*token);
  }
  return out;
}

// A language token: "<|" two or three lowercase letters "|>" ("<|en|>", "<|haw|>", "<|yue|>");
// the other special tokens are longer words, the timestamps digits.
std::optional<std::string> language_code(const std::string& token) {
  if (token.size() < 6 || token.size() > 7 || token.compare(0, 2, "<|") != 0 ||
      token.compare(token.size() - 2, 2, "|>") != 0)
    return std::nullopt;
  const std::string code = token.substr(2, token.size() - 4);
  for (const char c : code)
    if (c < 'a' || c > 'z') return std::nullopt;
  return code;
}

}  // namespace

WhisperTokenizer::WhisperTokenizer(const std::string& dir)
    : vocab_(Vocab::load(require_file(dir + "/vocab.json", kNeeds))), bpe_(require_file(dir + "/merges.txt", kNeeds)) {
  // added_tokens.json: the special tokens and timestamps after vocab.json's ids. A token that
  // vocab.json also holds under the same id is a copy (newer transformers save them so).
  const std::string added_path = dir + "/added_tokens.json";
  int64_t limit = vocab_.size();
  if (file_exists(added_path)) {
    const nlohmann::json added = io::read_json_file(added_path);
    if (!added.is_object()) throw Error(added_path + ": expected a JSON object mapping tokens to ids");
    for (const auto& [token, value] : added.items()) {
      if (!value.is_number_integer() || value.get<int64_t>() < 0)
        throw Error(added_path + ": token '" + token + "' must map to a non-negative integer id, found " +
                    value.dump());
      const int64_t id = value.get<int64_t>();
      if (const auto in_vocab = vocab_.find(token)) {
        if (*in_vocab == id) continue;
        throw Error(added_path + ": token '" + token + "' has id " + std::to_string(id) + ", but " +
                    std::to_string(*in_vocab) + " in " + vocab_.path());
      }
      if (!vocab_.piece(id).empty() || added_pieces_.count(id))
        throw Error(added_path + ": id " + std::to_string(id) + " is given to both '" + token + "' and '" + piece(id) +
                    "'");
      added_ids_.emplace(token, id);
      added_pieces_.emplace(id, token);
      limit = std::max(limit, id + 1);
    }
    if (limit > (vocab_.size() + static_cast<int64_t>(added_ids_.size())) * 4 + 1024)
      throw Error(added_path + ": id " + std::to_string(limit - 1) + " is far beyond the " +
                  std::to_string(vocab_.size() + static_cast<int64_t>(added_ids_.size())) + " tokens (corrupt file?)");
  }

  // The special tokens: WhisperTokenizer.__init__ makes bos/eos/unk/pad given as strings
  // (tokenizer_config.json or the defaults, <|endoftext|> and no pad) AddedTokens that strip
  // nothing; special_tokens_map.json's values then replace them as they are (a string there
  // is stripped on both sides).
  const std::string config_path = dir + "/tokenizer_config.json";
  const std::string map_path = dir + "/special_tokens_map.json";
  const nlohmann::json config = read_json_object(config_path);
  const nlohmann::json map = read_json_object(map_path);
  add_prefix_space_ = io::JsonFields(config, config_path).optional_bool("add_prefix_space").value_or(false);
  std::vector<ConfigToken> specials;
  std::string eos = "<|endoftext|>", unk = "<|endoftext|>";
  for (const std::string key : {"bos_token", "eos_token", "unk_token", "pad_token"}) {
    std::optional<ConfigToken> token;
    if (map.contains(key)) {
      token = config_token(map, map_path, key);
    } else {
      if (config.contains(key))
        token = config_token(config, config_path, key);
      else if (key != "pad_token")
        token = ConfigToken{"<|endoftext|>"};
      if (token && !token->added_token) token->added_token = true, token->lstrip = token->rstrip = false;
    }
    if (!token) continue;
    if (key == "eos_token") eos = token->content;
    if (key == "unk_token") unk = token->content;
    specials.push_back(*token);
  }
  std::vector<ConfigToken> additional = token_list(map, map_path, "additional_special_tokens");
  if (additional.empty()) additional = token_list(config, config_path, "additional_special_tokens");
  specials.insert(specials.end(), additional.begin(), additional.end());
  for (const ConfigToken& token : specials) {
    split_.tokens.insert(token.content);
    if (token.added_token && !token.lstrip && !token.rstrip) split_.unstripped.insert(token.content);
    if (token.added_token && token.lstrip && !token.rstrip) split_.left_strip_only.insert(token.content);
    if (token.added_token && !token.lstrip && token.rstrip) split_.right_strip_only.insert(token.content);
    if (const auto id = token_id(token.content)) special_ids_.insert(*id);
  }
  // Every added token is kept whole too (a plain string: stripped on both sides).
  for (const auto& [token, id] : added_ids_) split_.tokens.insert(token);

  const std::string files = "vocab.json / added_tokens.json of " + dir;
  const auto required = [&](const std::string& token) {
    const auto id = token_id(token);
    if (!id) throw Error(files + ": the special token '" + token + "' is missing");
    return *id;
  };
  specials_.end_of_text = required(eos);
  unk_id_ = token_id(unk).value_or(specials_.end_of_text);
  specials_.start_of_transcript = required("<|startoftranscript|>");
  specials_.translate = token_id("<|translate|>");
  specials_.transcribe = token_id("<|transcribe|>");
  specials_.start_of_lm = token_id("<|startoflm|>");
  specials_.start_of_prev = token_id("<|startofprev|>");
  specials_.no_speech = token_id("<|nospeech|>");
  if (!specials_.no_speech) specials_.no_speech = token_id("<|nocaptions|>");
  specials_.no_timestamps = required("<|notimestamps|>");
  specials_.timestamp_begin = specials_.no_timestamps + 1;
  specials_.vocab_size = limit;

  std::map<int64_t, std::string> codes;
  for (const auto& [token, id] : added_ids_)
    if (const auto code = language_code(token)) codes[id] = *code;
  for (const ConfigToken& token : specials)
    if (const auto code = language_code(token.content))
      if (const auto id = token_id(token.content)) codes[*id] = *code;
  for (const auto& [id, code] : codes) languages_.emplace_back(code, id);
}

std::optional<int64_t> WhisperTokenizer::token_id(const std::string& piece) const {
  const auto it = added_ids_.find(piece);
  if (it != added_ids_.end()) return it->second;
  return vocab_.find(piece);
}

const std::string& WhisperTokenizer::piece(int64_t id) const {
  const auto it = added_pieces_.find(id);
  return it != added_pieces_.end() ? it->second : vocab_.piece(id);
}

std::vector<std::string> WhisperTokenizer::tokenize(const std::string& text) const {
  check_utf8(text, "input text");
  // prepare_for_tokenization: add_prefix_space puts a space before any text.
  const std::string input = add_prefix_space_ ? " " + text : text;
  std::vector<std::string> tokens;
  for (const std::string& chunk : split_on_special_tokens(input, split_)) {
    if (split_.contains(chunk)) {
      tokens.push_back(chunk);
      continue;
    }
    for (std::string& piece : bpe_.pieces(chunk)) tokens.push_back(std::move(piece));
  }
  return tokens;
}

std::vector<int64_t> WhisperTokenizer::encode(const std::string& text) const {
  std::vector<int64_t> ids;
  for (const std::string& piece : tokenize(text)) ids.push_back(token_id(piece).value_or(unk_id_));
  return ids;
}

std::vector<int64_t> WhisperTokenizer::prompt_ids(const std::string& text, const std::string& field) const {
  if (!specials_.start_of_prev)
    throw Error(field + ": this model's tokenizer has no <|startofprev|> token to start a prompt with");
  check_utf8(text, field);
  const std::string stripped = icu_text::to_utf8(icu_text::python_strip(icu_text::from_utf8(text)));
  std::vector<int64_t> ids{*specials_.start_of_prev};
  for (const int64_t id : encode(" " + stripped)) {
    // get_prompt_ids refuses ids from the first special token (<|endoftext|>) on.
    if (id >= specials_.end_of_text)
      throw Error(field + ": the text contains '" + piece(id) +
                  "', a special token of the model, which a prompt may not hold");
    ids.push_back(id);
  }
  return ids;
}

std::string WhisperTokenizer::decode_run(const std::vector<std::string>& pieces) const {
  std::string bytes;
  for (const std::string& p : pieces) bpe_.append_bytes(p, bytes);
  return decode_utf8_replacing(bytes);
}

std::string WhisperTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  auto begin = ids.begin();
  // _strip_prompt: a prompt's text is not part of the output.
  if (skip_special_tokens && specials_.start_of_prev && !ids.empty() && ids[0] == *specials_.start_of_prev)
    begin = std::find(ids.begin(), ids.end(), specials_.start_of_transcript);
  std::string text;
  std::vector<std::string> run;  // BPE pieces since the last added token
  for (auto it = begin; it != ids.end(); ++it) {
    if (skip_special_tokens && is_special(*it)) continue;
    const auto added = added_pieces_.find(*it);
    if (added == added_pieces_.end()) {
      run.push_back(vocab_.piece(*it));
      continue;
    }
    text += decode_run(run) + added->second;
    run.clear();
  }
  return text + decode_run(run);
}

std::string WhisperTokenizer::decode_with_timestamps(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::string text;
  std::vector<int64_t> run;
  for (const int64_t id : ids) {
    if (!is_timestamp(id)) {
      run.push_back(id);
      continue;
    }
    char stamp[64];
    std::snprintf(stamp, sizeof stamp, "<|%.2f|>", timestamp_seconds(id));
    text += decode(run, skip_special_tokens) + stamp;
    run.clear();
  }
  return text + decode(run, skip_special_tokens);
}

std::vector<std::string> WhisperTokenizer::id_to_pieces(const std::vector<int64_t>& ids) const {
  std::vector<std::string> pieces;
  for (const int64_t id : ids) {
    if (is_special(id)) continue;
    const std::string& p = piece(id);
    if (!p.empty()) pieces.push_back(p);
  }
  return pieces;
}

std::vector<std::string> WhisperTokenizer::languages() const {
  std::vector<std::string> codes;
  for (const auto& [code, id] : languages_) codes.push_back(code);
  return codes;
}

std::optional<int64_t> WhisperTokenizer::language_id(const std::string& lang) const {
  const std::string code = language_code(lang).value_or(lang);
  for (const auto& [known, id] : languages_)
    if (known == code) return id;
  return std::nullopt;
}

std::optional<int64_t> WhisperTokenizer::task_id(const std::string& task) const {
  if (task == "transcribe") return specials_.transcribe;
  if (task == "translate") return specials_.translate;
  return std::nullopt;
}

std::unique_ptr<WhisperTokenizer> load_whisper_tokenizer(const std::string& model_dir) {
  return std::make_unique<WhisperTokenizer>(model_dir);
}

}  // namespace ordo::text
