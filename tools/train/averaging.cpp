#include "train/averaging.h"

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <map>

#include "io/safetensors.h"
#include "ordo/error.h"

namespace ordo::train {
namespace {

// The step of "step-<n>.safetensors", or -1 for any other name.
int64_t step_of(const std::string& name) {
  const std::string prefix = "step-", suffix = ".safetensors";
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) return -1;
  return std::stoll(digits);
}

}  // namespace

std::vector<std::string> list_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      const int64_t step = step_of(e->d_name);
      if (step >= 0) found.emplace_back(step, dir + "/" + e->d_name);
    }
    ::closedir(d);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> files;
  for (auto& f : found) files.push_back(std::move(f.second));
  return files;
}

std::vector<std::string> save_checkpoint(const std::string& dir, int64_t step, models::Seq2SeqModel& model,
                                         int64_t keep) {
  std::vector<io::TensorData> tensors;
  model.visit([&](const std::string& name, at::Tensor& param) {
    const at::Tensor t = param.detach().to(at::kFloat).contiguous();
    const std::vector<float> values(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
    tensors.push_back({name, io::DType::F32, t.sizes().vec(), io::float32_bytes(values)});
  });
  io::write_safetensors(dir + "/step-" + std::to_string(step) + ".safetensors", tensors,
                        {{"step", std::to_string(step)}});
  std::vector<std::string> files = list_checkpoints(dir);
  while (static_cast<int64_t>(files.size()) > std::max<int64_t>(keep, 1)) {
    std::remove(files.front().c_str());
    files.erase(files.begin());
  }
  return files;
}

void average_checkpoints(const std::vector<std::string>& files, models::Seq2SeqModel& model) {
  if (files.empty()) throw Error("checkpoint averaging: no checkpoint to average");
  std::map<std::string, at::Tensor> sums;  // float64, filled before the model is touched
  for (const std::string& path : files) {
    const io::SafetensorsFile file(path);
    model.visit([&](const std::string& name, at::Tensor& param) {
      const std::vector<float> v = io::to_float32(file.get(name, param.sizes().vec()));
      const at::Tensor t = at::from_blob(const_cast<float*>(v.data()), param.sizes(), at::kFloat).to(at::kDouble);
      auto it = sums.find(name);
      if (it == sums.end()) {
        sums.emplace(name, t);
      } else {
        it->second.add_(t);
      }
    });
  }
  at::NoGradGuard no_grad;
  model.visit([&](const std::string& name, at::Tensor& param) {
    param.copy_((sums.at(name) / static_cast<double>(files.size())).to(param.scalar_type()));
  });
}

}  // namespace ordo::train
