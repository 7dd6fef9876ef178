// What every layer in nn/ shares: its parameters are plain at::Tensor members, and it lists
// them, under their Hugging Face names, through visit(). One walk over the parameters then
// serves loading a checkpoint, saving one (the trainer), random initialisation (benchmarks)
// and handing them to an optimizer.
#pragma once

#include <functional>
#include <string>

#include <ATen/ATen.h>

namespace ordo::nn {

// Called once per parameter with its full name ("model.encoder.layers.0.fc1.weight") and the
// tensor, already allocated with the shape the config implies. A loader assigns to it.
using ParamVisitor = std::function<void(const std::string& name, at::Tensor& param)>;

inline std::string join_name(const std::string& prefix, const std::string& name) {
  return prefix.empty() ? name : prefix + "." + name;
}

}  // namespace ordo::nn
