#include <sys/mman.h>
#include <unistd.h>

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
  // One copy out of the mapping (float32 straight into the tensor), then the mapped pages are
  // handed back: read once, they would otherwise stay in the process's resident set next to
  // the copy (and later the packed weights) until the file is closed.
  at::Tensor get(const std::string& name) const override { return copy_out(float_tensor(name)); }
  at::Tensor get_rows(const std::string& name, int64_t begin, int64_t count) const override {
    const io::TensorView& view = float_tensor(name);
    if (view.shape.empty() || begin < 0 || count < 0 || begin + count > view.shape[0])
      throw Error(path() + ": rows " + std::to_string(begin) + "+" + std::to_string(count) + " of tensor '" + name +
                  "' are out of range");
    io::TensorView rows = view;
    const size_t row_bytes = view.shape[0] > 0 ? view.nbytes / static_cast<size_t>(view.shape[0]) : 0;
    rows.data = static_cast<const uint8_t*>(view.data) + static_cast<size_t>(begin) * row_bytes;
    rows.shape[0] = count;
    rows.nbytes = static_cast<size_t>(count) * row_bytes;
    return copy_out(rows);
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

  static at::Tensor copy_out(const io::TensorView& view) {
    at::Tensor out;
    if (view.dtype == io::DType::F32) {
      out = at::empty(view.shape, at::kFloat);
      if (view.nbytes > 0) std::memcpy(out.data_ptr<float>(), view.data, view.nbytes);
    } else {
      std::vector<float> values = io::to_float32(view);
      out = at::from_blob(values.data(), view.shape, at::kFloat).clone();
    }
    release_pages(view);
    return out;
  }

  // MADV_DONTNEED on a private read-only file mapping drops the pages; reading them again
  // (a tied tensor looked up twice) faults them back in from the file.
  static void release_pages(const io::TensorView& view) {
    static const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const auto begin = reinterpret_cast<uintptr_t>(view.data);
    const uintptr_t first = begin & ~(page - 1), last = (begin + view.nbytes + page - 1) & ~(page - 1);
    if (view.nbytes > 0) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
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
