// Pegasus, as Hugging Face's PegasusTokenizer (slow, 4.31): spiece.model pieces with ids
// shifted by `offset` (103); ids 0..offset-1 are <pad>, </s>, <mask_1>, <mask_2> and
// <unk_2>..<unk_102>; </s> appended.
#include <memory>

#include "io/json_file.h"
#include "ordo/error.h"
#include "text/spm_tokenizer.h"

namespace ordo::text {
namespace {

class PegasusTokenizer : public SpmTokenizer {
 public:
  explicit PegasusTokenizer(const std::string& dir)
      : SpmTokenizer(dir, "spiece.model", missing_spiece_reason(dir)) {
    const std::string config = dir + "/tokenizer_config.json";
    offset_ = 103;
    if (file_exists(config))
      offset_ = io::JsonFields(io::read_json_file(config), config).optional_int("offset").value_or(103);
    const std::string mask_sent = tokenizer_string(dir, "mask_token_sent", "<mask_1>");
    const std::string mask = tokenizer_string(dir, "mask_token", "<mask_2>");
    std::vector<std::string> additional = tokenizer_list(dir, "additional_special_tokens");
    if (additional.empty()) {
      additional.push_back(mask_sent);
      for (int64_t i = 2; i < offset_; ++i) additional.push_back("<unk_" + std::to_string(i) + ">");
    }
    // PegasusTokenizer.__init__: encoder = {0: pad, 1: eos, 2: mask_sent, 3: mask,
    // i + 3: additional_special_tokens[i] for i in 1 .. offset - 2}.
    fixed_ = {{0, "<pad>"}, {1, "</s>"}, {2, mask_sent}, {3, mask}};
    for (int64_t i = 1; i < offset_ - 1 && i < static_cast<int64_t>(additional.size()); ++i)
      fixed_[i + 3] = additional[static_cast<size_t>(i)];
    for (const auto& [id, token] : fixed_) {
      fixed_ids_[token] = id;
      specials_.tokens.insert(token);
    }
    specials_.tokens.insert("<unk>");
    eos_id_ = 1;
  }

 protected:
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
