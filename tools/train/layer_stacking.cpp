#include "train/layer_stacking.h"

#include <algorithm>

#include "ordo/error.h"

namespace ordo::train {
namespace {

class StackedCheckpoint : public models::Checkpoint {
 public:
  StackedCheckpoint(std::unique_ptr<models::Checkpoint> trained, int64_t trained_layers, int64_t layers)
      : trained_(std::move(trained)), trained_layers_(trained_layers), layers_(layers) {}
  const std::string& path() const override { return trained_->path(); }
  bool contains(const std::string& name) const override { return trained_->contains(map(name)); }
  at::Tensor get(const std::string& name) const override { return trained_->get(map(name)); }
  at::Tensor get_rows(const std::string& name, int64_t begin, int64_t count) const override {
    return trained_->get_rows(map(name), begin, count);
  }
  std::vector<int64_t> shape(const std::string& name) const override { return trained_->shape(map(name)); }
  // The deeper model's names: every name whose layer maps to one of the trained file's.
  std::vector<std::string> names() const override {
    std::vector<std::string> out;
    const std::string marker = ".layers.";
    for (const std::string& name : trained_->names()) {
      const size_t at = name.find(marker);
      if (at == std::string::npos) {
        out.push_back(name);
        continue;
      }
      const size_t begin = at + marker.size();
      const size_t end = name.find('.', begin);
      for (int64_t layer = 0; layer < layers_; ++layer) {
        std::string candidate =
            name.substr(0, begin) + std::to_string(layer) + (end == std::string::npos ? "" : name.substr(end));
        if (map(candidate) == name) out.push_back(std::move(candidate));
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string map(const std::string& name) const { return stacked_name(name, trained_layers_, layers_); }
  std::unique_ptr<models::Checkpoint> trained_;
  int64_t trained_layers_, layers_;
};

}  // namespace

std::string stacked_name(const std::string& name, int64_t trained_layers, int64_t layers) {
  const std::string marker = ".layers.";
  const size_t at = name.find(marker);
  if (at == std::string::npos) return name;
  const size_t begin = at + marker.size();
  const size_t end = name.find('.', begin);
  const std::string digits = name.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos) return name;
  const int64_t layer = std::stoll(digits);
  if (layer >= layers) return name;  // not a layer of the deeper model: let the lookup fail on it
  return name.substr(0, begin) + std::to_string(layer * trained_layers / layers) +
         (end == std::string::npos ? "" : name.substr(end));
}

void check_growth(const std::string& where, int64_t trained_layers, int64_t layers) {
  if (trained_layers < 1 || layers < trained_layers)
    throw Error(where + ": cannot grow " + std::to_string(trained_layers) + " layers into " + std::to_string(layers) +
                " (--init-layers must be at least the --init model's layers)");
}

std::unique_ptr<models::Checkpoint> stacked_checkpoint(std::unique_ptr<models::Checkpoint> trained,
                                                       int64_t trained_layers, int64_t layers) {
  check_growth(trained->path(), trained_layers, layers);
  return std::make_unique<StackedCheckpoint>(std::move(trained), trained_layers, layers);
}

}  // namespace ordo::train
