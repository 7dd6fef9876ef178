// Legacy pytorch_model.bin: the zip archive torch.save() writes (PyTorch >= 1.6). LibTorch's
// unpickler reads it into a dict of tensors. Older (pre-zip) pickles are not readable from
// C++; those get an error that says to convert the folder to safetensors.
#include <map>

#include <torch/csrc/jit/serialization/pickle.h>

#include "io/file.h"
#include "models/checkpoint.h"
#include "ordo/error.h"

namespace ordo::models {

namespace {

class PytorchBinCheckpoint : public Checkpoint {
 public:
  explicit PytorchBinCheckpoint(const std::string& path) : path_(path) {
    const std::string content = io::read_regular_file(path);
    const std::vector<char> bytes(content.begin(), content.end());
    c10::IValue value;
    try {
      value = torch::jit::pickle_load(bytes);
    } catch (const std::exception& e) {
      throw Error(path + ": LibTorch cannot read this file (" + std::string(e.what()).substr(0, 200) +
                  "); only the zip format of torch.save() is supported — convert the folder to "
                  "model.safetensors");
    }
    if (!value.isGenericDict()) throw Error(path + ": expected a state dict (name -> tensor)");
    for (const auto& entry : value.toGenericDict()) {
      if (!entry.key().isString() || !entry.value().isTensor()) continue;
      tensors_[entry.key().toStringRef()] = entry.value().toTensor();
    }
  }
  const std::string& path() const override { return path_; }
  bool contains(const std::string& name) const override { return tensors_.count(name) > 0; }
  std::vector<int64_t> shape(const std::string& name) const override { return find(name).sizes().vec(); }
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    for (const auto& entry : tensors_) out.push_back(entry.first);
    return out;
  }
  at::Tensor get(const std::string& name) const override { return float_tensor(name).to(at::kFloat).contiguous(); }
  at::Tensor get_rows(const std::string& name, int64_t begin, int64_t count) const override {
    return float_tensor(name).narrow(0, begin, count).to(at::kFloat).contiguous();
  }

 private:
  const at::Tensor& find(const std::string& name) const {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) throw Error(path_ + ": tensor '" + name + "' is missing");
    return it->second;
  }
  // As for safetensors: integer weights are refused, naming the file and the tensor.
  const at::Tensor& float_tensor(const std::string& name) const {
    const at::Tensor& t = find(name);
    if (!t.is_floating_point())
      throw Error(path_ + ": tensor '" + name + "' has dtype " + std::string(c10::toString(t.scalar_type())) +
                  "; weights must be stored as floating point");
    return t;
  }
  std::string path_;
  std::map<std::string, at::Tensor> tensors_;
};

}  // namespace

std::unique_ptr<Checkpoint> open_pytorch_bin(const std::string& path) {
  return std::make_unique<PytorchBinCheckpoint>(path);
}

}  // namespace ordo::models
