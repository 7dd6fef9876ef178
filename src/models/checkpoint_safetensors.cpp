#include "io/file.h"
#include "io/safetensors.h"
#include "models/checkpoint.h"
#include "ordo/error.h"

namespace ordo::models {

namespace {

class SafetensorsCheckpoint : public Checkpoint {
 public:
  explicit SafetensorsCheckpoint(const std::string& path) : file_(path) {}
  const std::string& path() const override { return file_.path(); }
  bool contains(const std::string& name) const override { return file_.contains(name); }
  std::vector<int64_t> shape(const std::string& name) const override { return file_.get(name).shape; }
  at::Tensor get(const std::string& name) const override {
    const io::TensorView& view = file_.get(name);
    std::vector<float> values = io::to_float32(view);
    return at::from_blob(values.data(), view.shape, at::kFloat).clone();
  }

 private:
  io::SafetensorsFile file_;
};

}  // namespace

std::unique_ptr<Checkpoint> open_safetensors(const std::string& path) {
  return std::make_unique<SafetensorsCheckpoint>(path);
}

std::unique_ptr<Checkpoint> open_checkpoint(const std::string& model_dir) {
  const std::string safetensors = model_dir + "/model.safetensors";
  const std::string bin = model_dir + "/pytorch_model.bin";
  if (io::path_exists(safetensors)) return open_safetensors(safetensors);
  if (io::path_exists(bin)) return open_pytorch_bin(bin);
  throw Error(model_dir + ": no model weights found (looked for model.safetensors and pytorch_model.bin)");
}

}  // namespace ordo::models
