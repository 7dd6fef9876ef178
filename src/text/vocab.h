// A piece <-> id table read from a Hugging Face vocab.json ({"piece": id, ...}).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ordo::text {

class Vocab {
 public:
  // Throws ordo::Error naming the file (missing, invalid JSON with line:column, non-integer or
  // negative or duplicate id naming the piece).
  static Vocab load(const std::string& path);

  std::optional<int64_t> find(const std::string& piece) const;
  // The id of a piece that must be present (special tokens); error names the file.
  int64_t require(const std::string& piece) const;
  // "" for ids that no piece maps to.
  const std::string& piece(int64_t id) const;
  int64_t size() const { return static_cast<int64_t>(pieces_.size()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::unordered_map<std::string, int64_t> ids_;
  std::vector<std::string> pieces_;  // indexed by id
};

}  // namespace ordo::text
