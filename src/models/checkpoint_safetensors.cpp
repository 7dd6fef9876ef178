#include <cstring>

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
  std::vector<std::string> names() const override { return file_.names(); }
  // One copy straight from the file into the tensor (read(), never through the mapping): a
  // file cut short while it is loaded is an ordo::Error, not SIGBUS, and the file's pages
  // never join the process's resident set next to the copy (and later the packed weights).
  at::Tensor get(const std::string& name) const override {
    const io::TensorView& view = float_tensor(name);
    return copy_out(view, 0, view.shape);
  }
  at::Tensor get_rows(const std::string& name, int64_t begin, int64_t count) const override {
    const io::TensorView& view = float_tensor(name);
    if (view.shape.empty() || begin < 0 || count < 0 || begin + count > view.shape[0])
      throw Error(path() + ": rows " + std::to_string(begin) + "+" + std::to_string(count) + " of tensor '" + name +
                  "' are out of range");
    std::vector<int64_t> shape = view.shape;
    shape[0] = count;
    const size_t row_bytes = view.shape[0] > 0 ? view.nbytes / static_cast<size_t>(view.shape[0]) : 0;
    return copy_out(view, static_cast<size_t>(begin) * row_bytes, shape);
  }

 private:
  // A weight stored as integers (I16, I32, ...) is no weight ordo can use: named with its file.
  const io::TensorView& float_tensor(const std::string& name) const {
    const io::TensorView& view = file_.get(name);
    if (!io::is_float(view.dtype))
      throw Error(path() + ": tensor '" + name + "' has dtype " + io::dtype_name(view.dtype) +
                  "; weights must be stored as F32, F16, BF16 or F64");
    return view;
  }

  // The values of `view` from byte `begin` on, `shape` of them, as float32.
  at::Tensor copy_out(const io::TensorView& view, size_t begin, const std::vector<int64_t>& shape) const {
    size_t count = 1;
    for (const int64_t d : shape) count *= static_cast<size_t>(d);
    const size_t bytes = count * io::dtype_size(view.dtype);
    at::Tensor out = at::empty(shape, at::kFloat);
    if (bytes == 0) return out;
    if (view.dtype == io::DType::F32) {
      file_.read(view, begin, bytes, out.data_ptr<float>());
      return out;
    }
    std::vector<uint8_t> raw(bytes);
    file_.read(view, begin, bytes, raw.data());
    io::TensorView part = view;
    part.data = raw.data();
    part.shape = shape;
    part.nbytes = bytes;
    io::to_float32(part, out.data_ptr<float>());
    return out;
  }

  io::SafetensorsFile file_;
};

}  // namespace

std::unique_ptr<Checkpoint> open_safetensors(const std::string& path) {
  return std::make_unique<SafetensorsCheckpoint>(path);
}

std::unique_ptr<Checkpoint> open_checkpoint(const std::string& model_dir) {
  const std::string safetensors = model_dir + "/model.safetensors";
  const std::string bin = model_dir + "/pytorch_model.bin";
  // path_exists: a file that is there but cannot be looked at (a symlink loop, no permission)
  // is opened, so that its error says why, instead of "no model weights found".
  if (io::path_exists(safetensors)) return open_safetensors(safetensors);
  if (io::path_exists(bin)) return open_pytorch_bin(bin);
  throw Error(model_dir + ": no model weights found (looked for model.safetensors and pytorch_model.bin)");
}

}  // namespace ordo::models
