// A scratch copy of a fixture model folder that a test may break: edit its JSON files,
// rewrite its weights, put a FIFO or a directory where a file should be. Removed at the end.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "ordo/translator.h"
#include "support/fixtures.h"

namespace ordo::testing {

class ScratchModel {
 public:
  explicit ScratchModel(const std::string& fixture, const std::string& tag = "") {
    namespace fs = std::filesystem;
    dir_ =
        (fs::temp_directory_path() / ("ordo_model_" + std::to_string(::getpid()) + "_" + fixture + "_" + tag)).string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    for (const auto& entry : fs::directory_iterator(fixture_dir(fixture)))
      if (entry.path().filename() != "golden.json" && entry.path().filename() != "attention.json")
        fs::copy(entry.path(), fs::path(dir_) / entry.path().filename());
    for (const auto& entry : fs::directory_iterator(dir_))
      fs::permissions(entry.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  ~ScratchModel() { std::filesystem::remove_all(dir_); }
  ScratchModel(const ScratchModel&) = delete;
  ScratchModel& operator=(const ScratchModel&) = delete;

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& file) const { return dir_ + "/" + file; }
  void write(const std::string& file, const std::string& content) const {
    std::ofstream(path(file), std::ios::binary | std::ios::trunc) << content;
  }
  nlohmann::json read_json(const std::string& file) const {
    std::ifstream in(path(file));
    return nlohmann::json::parse(in);
  }
  // Sets `key` of a JSON file of the folder to `value` (JSON text, so that numbers JSON
  // cannot hold exactly, like 1e999, can be written).
  void set_json(const std::string& file, const std::string& key, const std::string& value) const {
    nlohmann::json json = read_json(file);
    json[key] = nullptr;
    std::string text = json.dump(1);
    const std::string slot = "\"" + key + "\": null";
    text.replace(text.find(slot), slot.size(), "\"" + key + "\": " + value);
    write(file, text);
  }
  // Replaces `file` with a FIFO (nobody ever writes to it) or a directory.
  void make_fifo(const std::string& file) const {
    std::filesystem::remove(path(file));
    ::mkfifo(path(file).c_str(), 0644);
  }
  void make_directory(const std::string& file) const {
    std::filesystem::remove(path(file));
    std::filesystem::create_directory(path(file));
  }
  // Rewrites model.safetensors through `edit`, which may drop or change tensors.
  template <class Edit>
  void rewrite_weights(Edit edit) const {
    std::vector<io::TensorData> tensors;
    {
      const io::SafetensorsFile file(path("model.safetensors"));
      for (const std::string& name : file.names()) {
        const io::TensorView& view = file.get(name);
        const auto* bytes = static_cast<const uint8_t*>(view.data);
        tensors.push_back({name, view.dtype, view.shape, std::vector<uint8_t>(bytes, bytes + view.nbytes)});
      }
    }
    edit(tensors);
    io::write_safetensors(path("model.safetensors"), tensors);
  }
  // The error message of loading the folder ("" if it loads).
  std::string load_error(const ModelOptions& options = {}) const {
    try {
      Translator translator(dir_, options);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }

 private:
  std::string dir_;
};

}  // namespace ordo::testing
