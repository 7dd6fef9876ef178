// Where a model's weights come from: model.safetensors (memory-mapped, preferred) or a legacy
// pytorch_model.bin written by torch.save. One interface, so the model's loading code does
// not care which.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace ordo::models {

class Checkpoint {
 public:
  virtual ~Checkpoint() = default;
  virtual const std::string& path() const = 0;
  virtual bool contains(const std::string& name) const = 0;
  // The tensor as float32 with its stored shape. Throws ordo::Error naming the file when absent.
  virtual at::Tensor get(const std::string& name) const = 0;
  // Rows [begin, begin + count) of a tensor as float32 (a large table converted slice by
  // slice, never whole). The caller checks the range against shape(name).
  virtual at::Tensor get_rows(const std::string& name, int64_t begin, int64_t count) const = 0;
  virtual std::vector<int64_t> shape(const std::string& name) const = 0;
  // Every tensor name the file holds, sorted.
  virtual std::vector<std::string> names() const = 0;
};

// model.safetensors if the folder has it, else pytorch_model.bin; ordo::Error naming the
// folder and both file names if neither exists or the file cannot be read.
std::unique_ptr<Checkpoint> open_checkpoint(const std::string& model_dir);

std::unique_ptr<Checkpoint> open_safetensors(const std::string& path);
std::unique_ptr<Checkpoint> open_pytorch_bin(const std::string& path);

}  // namespace ordo::models
