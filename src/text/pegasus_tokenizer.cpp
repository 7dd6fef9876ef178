// Pegasus, as Hugging Face's PegasusTokenizer (slow, 4.31): spiece.model pieces with ids
// shifted by `offset` (103); ids 0..offset-1 are <pad>, </s>, <mask_1>, <mask_2> and
// <unk_2>..<unk_102>; </s> appended.
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "io/json_file.h"
#include "ordo/error.h"
#include "text/spm_tokenizer.h"

namespace ordo::text {
namespace {

// A token's text from tokenizer_config.json (string or AddedToken), std::nullopt if absent.
std::optional<std::string> config_text(const nlohmann::json& config, const std::string& path, const std::string& key) {
  const std::optional<ConfigToken> token = config_token(config, path, key);
  return token ? std::optional<std::string>(token->content) : std::nullopt;
}

class PegasusTokenizer : public SpmTokenizer {
 public:
  explicit PegasusTokenizer(const std::string& dir) : SpmTokenizer(dir, "spiece.model", missing_spiece_reason(dir)) {
    // The arguments of PegasusTokenizer.__init__ come from tokenizer_config.json; HF applies
    // special_tokens_map.json afterwards (setattr), which changes which tokens are special
    // but not the id table built here.
    const std::string path = dir + "/tokenizer_config.json";
    nlohmann::json config = nlohmann::json::object();
    if (file_exists(path)) config = io::read_json_file(path);
    if (!config.is_object()) config = nlohmann::json::object();
    const io::JsonFields fields(config, path);

    offset_ = fields.optional_int("offset").value_or(103);
    if (offset_ < 0 || offset_ > kMaxOffset)
      fields.fail("offset", "is " + std::to_string(offset_) + ", outside [0, " + std::to_string(kMaxOffset) + "]");
    const std::string pad = config_text(config, path, "pad_token").value_or("<pad>");
    const std::string eos = config_text(config, path, "eos_token").value_or("</s>");
    const std::string unk = config_text(config, path, "unk_token").value_or("<unk>");
    const std::string mask = config_text(config, path, "mask_token").value_or("<mask_2>");
    // mask_token_sent: absent -> "<mask_1>" (the default argument); null -> None.
    std::optional<std::string> mask_sent = "<mask_1>";
    if (config.contains("mask_token_sent")) mask_sent = config_text(config, path, "mask_token_sent");

    std::vector<std::string> additional;
    if (fields.has("additional_special_tokens")) {
      // [mask_token_sent] + the given tokens (unless they contain it), padded with
      // <unk_i> for i = len .. offset - 2; duplicates are an error.
      const std::vector<std::string> given = *fields.optional_strings("additional_special_tokens");
      if (mask_sent && std::find(given.begin(), given.end(), *mask_sent) == given.end())
        additional.push_back(*mask_sent);
      additional.insert(additional.end(), given.begin(), given.end());
      for (int64_t i = static_cast<int64_t>(additional.size()); i < offset_ - 1; ++i)
        additional.push_back("<unk_" + std::to_string(i) + ">");
      if (std::set<std::string>(additional.begin(), additional.end()).size() != additional.size())
        fields.fail("additional_special_tokens", "has duplicate tokens (with mask_token_sent and <unk_N> filling)");
    } else {
      if (mask_sent) additional.push_back(*mask_sent);
      for (int64_t i = 2; i < offset_; ++i) additional.push_back("<unk_" + std::to_string(i) + ">");
    }

    // PegasusTokenizer.__init__: encoder = {0: pad, 1: eos} (+ {2: mask_token_sent,
    // 3: mask_token} when mask_token_sent is set) + {i + 3: additional[i] for i in
    // 1 .. offset - 2} when offset > 0; later entries overwrite earlier ones.
    std::map<int64_t, std::string> encoder = {{0, pad}, {1, eos}};
    if (mask_sent) {
      encoder[2] = *mask_sent;
      encoder[3] = mask;
    }
    for (int64_t i = 1; i < offset_ - 1; ++i) {
      if (i >= static_cast<int64_t>(additional.size()))
        fields.fail("additional_special_tokens", "has fewer tokens than offset " + std::to_string(offset_) + " needs");
      encoder[i + 3] = additional[static_cast<size_t>(i)];
    }
    fixed_ = encoder;
    for (const auto& [id, token] : fixed_) fixed_ids_[token] = id;  // decoder: the last id wins

    // all_special_tokens: pad, eos, unk, mask_token and additional_special_tokens (those of
    // special_tokens_map.json when it lists them).
    std::vector<std::string> special_list = additional;
    const std::string map_path = dir + "/special_tokens_map.json";
    if (file_exists(map_path)) {
      const nlohmann::json map = io::read_json_file(map_path);
      if (map.is_object())
        if (auto listed = io::JsonFields(map, map_path).optional_strings("additional_special_tokens"))
          special_list = *listed;
    }
    for (const std::string& token : {pad, eos, unk, mask}) specials_.tokens.insert(token);
    for (const std::string& token : special_list) specials_.tokens.insert(token);
    eos_id_ = piece_to_id(eos);
  }

 protected:
  // HF's default is 103; the offset also counts the <unk_N> placeholders built below.
  static constexpr int64_t kMaxOffset = 1 << 16;

  IdRange source_id_range() const override {
    int64_t limit = spm_.size() + offset_;
    for (const auto& [piece, id] : fixed_ids_) limit = std::max(limit, id + 1);
    return {limit, spm_.path() + " (ids shifted by " + std::to_string(offset_) + ")"};
  }
  int64_t piece_to_id(const std::string& piece) const override {
    const auto it = fixed_ids_.find(piece);
    if (it != fixed_ids_.end()) return it->second;
    return spm_.piece_to_id(piece) + offset_;
  }
  std::string id_to_piece(int64_t id) const override {
    const auto it = fixed_.find(id);
    if (it != fixed_.end()) return it->second;
    if (id - offset_ < 0 || id - offset_ >= spm_.size()) return "<unk>";
    return spm_.id_to_piece(static_cast<int>(id - offset_));
  }

 private:
  static std::string missing_spiece_reason(const std::string& dir) {
    if (file_exists(dir + "/tokenizer.json"))
      return "this folder has only tokenizer.json; ordo reads Pegasus' SentencePiece model spiece.model "
             "(many repositories keep it in Git LFS: fetch it with `git lfs pull`)";
    return "Pegasus models need spiece.model";
  }

  int64_t offset_ = 103;
  std::map<int64_t, std::string> fixed_;
  std::map<std::string, int64_t> fixed_ids_;
};

}  // namespace

std::unique_ptr<Tokenizer> load_pegasus_tokenizer(const std::string& model_dir) {
  return std::make_unique<PegasusTokenizer>(model_dir);
}

}  // namespace ordo::text
