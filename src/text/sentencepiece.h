// A SentencePiece model, used through the dlopen'ed shim (see sentencepiece_shim.h for why).
#pragma once

#include <string>
#include <vector>

namespace ordo::text {

class SentencePiece {
 public:
  // Throws ordo::Error "<path>: cannot load SentencePiece model (...)".
  explicit SentencePiece(const std::string& path);
  ~SentencePiece();
  SentencePiece(const SentencePiece&) = delete;
  SentencePiece& operator=(const SentencePiece&) = delete;

  std::vector<std::string> encode(const std::string& text) const;   // pieces
  std::string decode(const std::vector<std::string>& pieces) const;  // detokenized text
  int piece_to_id(const std::string& piece) const;  // the unknown id when absent
  std::string id_to_piece(int id) const;             // id must be < size()
  int size() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace ordo::text
