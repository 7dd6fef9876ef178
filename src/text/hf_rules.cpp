#include "text/hf_rules.h"

#include "io/file.h"
#include "io/json_file.h"
#include "ordo/error.h"

namespace ordo::text {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
std::string rstrip(std::string s) {
  while (!s.empty() && is_space(s.back())) s.pop_back();
  return s;
}
std::string lstrip(const std::string& s) {
  size_t i = 0;
  while (i < s.size() && is_space(s[i])) ++i;
  return s.substr(i);
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size()))
    s.replace(pos, from.size(), to);
}

}  // namespace

bool file_exists(const std::string& path) { return io::path_exists(path); }

std::string require_file(const std::string& path, const std::string& why) {
  return io::require_regular_file(path, why);
}

std::vector<std::string> split_on_special_tokens(const std::string& text, const SpecialTokens& specials) {
  std::vector<std::string> chunks;
  size_t start = 0, pos = 0;
  while (pos < text.size()) {
    // The longest special token starting here (HF's trie matches the longest); only those
    // starting with this byte are compared (an empty token never matches).
    const std::string* found = nullptr;
    for (auto it = specials.tokens.lower_bound(std::string(1, text[pos]));
         it != specials.tokens.end() && (*it)[0] == text[pos]; ++it)
      if (text.compare(pos, it->size(), *it) == 0 && (!found || it->size() > found->size())) found = &*it;
    if (!found) {
      ++pos;
      continue;
    }
    chunks.push_back(text.substr(start, pos - start));
    chunks.push_back(*found);
    pos += found->size();
    start = pos;
  }
  chunks.push_back(text.substr(start));
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (!specials.contains(chunks[i])) continue;
    if (specials.unstripped.count(chunks[i])) continue;
    const bool left_only = specials.left_strip_only.count(chunks[i]) != 0;
    const bool right_only = specials.right_strip_only.count(chunks[i]) != 0;
    if (i + 1 < chunks.size() && !left_only) chunks[i + 1] = lstrip(chunks[i + 1]);
    if (i > 0 && !right_only) chunks[i - 1] = rstrip(chunks[i - 1]);
  }
  std::vector<std::string> out;
  for (std::string& chunk : chunks)
    if (!chunk.empty()) out.push_back(std::move(chunk));
  return out;
}

std::string pieces_to_text(const std::vector<std::string>& pieces, const SpecialTokens& specials,
                           const SentencePiece& spm, const std::string& after_special) {
  std::string out;
  std::vector<std::string> run;
  for (const std::string& piece : pieces) {
    if (specials.contains(piece)) {
      out += spm.decode(run) + piece + after_special;
      run.clear();
    } else {
      run.push_back(piece);
    }
  }
  out += spm.decode(run);
  size_t begin = 0, end = out.size();
  while (begin < end && is_space(out[begin])) ++begin;
  while (end > begin && is_space(out[end - 1])) --end;
  return out.substr(begin, end - begin);
}

std::string clean_up_tokenization(std::string s) {
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{{" .", "."},
                                                                                 {" ?", "?"},
                                                                                 {" !", "!"},
                                                                                 {" ,", ","},
                                                                                 {" ' ", "'"},
                                                                                 {" n't", "n't"},
                                                                                 {" 'm", "'m"},
                                                                                 {" 's", "'s"},
                                                                                 {" 've", "'ve"},
                                                                                 {" 're", "'re"}})
    replace_all(s, from, to);
  return s;
}

std::optional<ConfigToken> config_token(const nlohmann::json& config, const std::string& path, const std::string& key) {
  const auto it = config.find(key);
  if (it == config.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) return ConfigToken{it->get<std::string>()};
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
    ConfigToken token{(*it)["content"].get<std::string>(), true};
    const io::JsonFields fields(*it, path + ": field '" + key + "'");
    token.lstrip = fields.optional_bool("lstrip").value_or(false);
    token.rstrip = fields.optional_bool("rstrip").value_or(false);
    return token;
  }
  io::JsonFields(config, path).fail(key, "must be a string or an AddedToken object with a 'content' string");
}

nlohmann::json read_json_object(const std::string& path) {
  if (!file_exists(path)) return nlohmann::json::object();
  nlohmann::json json = io::read_json_file(path);
  return json.is_object() ? json : nlohmann::json::object();
}

bool clean_up_spaces(const std::string& dir) {
  const std::string path = dir + "/tokenizer_config.json";
  const nlohmann::json json = read_json_object(path);
  return io::JsonFields(json, path).optional_bool("clean_up_tokenization_spaces").value_or(true);
}

std::vector<std::string> tokenizer_list(const std::string& dir, const std::string& key) {
  for (const char* file : {"/tokenizer_config.json", "/special_tokens_map.json"}) {
    const std::string path = dir + file;
    const nlohmann::json json = read_json_object(path);
    const io::JsonFields fields(json, path);
    if (!fields.has(key)) continue;
    const nlohmann::json& list = json.at(key);
    if (!list.is_array()) fields.fail(key, "must be a list of tokens");
    std::vector<std::string> out;
    for (const nlohmann::json& item : list) {  // a string or an AddedToken object
      if (item.is_object() && item.contains("content") && item["content"].is_string()) {
        out.push_back(item["content"].get<std::string>());
      } else if (item.is_string()) {
        out.push_back(item.get<std::string>());
      } else {
        fields.fail(key, "must be a list of strings or AddedToken objects, found element " + item.dump());
      }
    }
    return out;
  }
  return {};
}

std::string tokenizer_string(const std::string& dir, const std::string& key, const std::string& fallback) {
  const std::string path = dir + "/tokenizer_config.json";
  const nlohmann::json json = read_json_object(path);
  return io::JsonFields(json, path).optional_string(key).value_or(fallback);
}

}  // namespace ordo::text
