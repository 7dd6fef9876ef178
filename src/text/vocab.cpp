#include "text/vocab.h"

#include "io/json_file.h"
#include "ordo/error.h"

namespace ordo::text {

Vocab Vocab::load(const std::string& path) {
  const nlohmann::json json = io::read_json_file(path);
  if (!json.is_object()) throw Error(path + ": expected a JSON object mapping pieces to ids");
  Vocab vocab;
  vocab.path_ = path;
  int64_t max_id = -1;
  for (const auto& [piece, value] : json.items()) {
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      throw Error(path + ": piece '" + piece + "' must map to a non-negative integer id, found " + value.dump());
    const int64_t id = value.get<int64_t>();
    max_id = std::max(max_id, id);
    vocab.ids_.emplace(piece, id);
  }
  if (max_id > static_cast<int64_t>(vocab.ids_.size()) * 4 + 1024)
    throw Error(path + ": id " + std::to_string(max_id) + " is far beyond the " + std::to_string(vocab.ids_.size()) +
                " entries (corrupt vocabulary?)");
  vocab.pieces_.assign(static_cast<size_t>(max_id + 1), std::string());
  for (const auto& [piece, id] : vocab.ids_) {
    std::string& slot = vocab.pieces_[static_cast<size_t>(id)];
    if (!slot.empty())
      throw Error(path + ": id " + std::to_string(id) + " is given to both '" + slot + "' and '" + piece + "'");
    slot = piece;
  }
  return vocab;
}

std::optional<int64_t> Vocab::find(const std::string& piece) const {
  const auto it = ids_.find(piece);
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

int64_t Vocab::require(const std::string& piece) const {
  const auto id = find(piece);
  if (!id) throw Error(path_ + ": the special token '" + piece + "' is missing");
  return *id;
}

const std::string& Vocab::piece(int64_t id) const {
  static const std::string empty;
  if (id < 0 || id >= size()) return empty;
  return pieces_[static_cast<size_t>(id)];
}

}  // namespace ordo::text
