// A SentencePiece model, used through the dlopen'ed shim (see sentencepiece_shim.h for why).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

struct dl_phdr_info;  // <link.h>

namespace ordo::text {

class SentencePiece {
 public:
  // Throws ordo::Error "<path>: cannot load SentencePiece model (...)", or "<path>: is a
  // directory, not a SentencePiece model file" (also FIFOs and devices: never blocks).
  explicit SentencePiece(const std::string& path);
  ~SentencePiece();
  SentencePiece(const SentencePiece&) = delete;
  SentencePiece& operator=(const SentencePiece&) = delete;

  std::vector<std::string> encode(const std::string& text) const;    // pieces
  std::string decode(const std::vector<std::string>& pieces) const;  // detokenized text
  int piece_to_id(const std::string& piece) const;                   // the unknown id when absent
  std::string id_to_piece(int id) const;                             // ordo::Error unless 0 <= id < size()
  int size() const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  void* handle_ = nullptr;
};

// Trains a SentencePiece model in this process, as Debian's spm_train does: `args` are
// spm_train's options ("--input=corpus.txt", "--model_prefix=spm", "--vocab_size=8000", ...).
// Throws ordo::Error with SentencePiece's message when training fails.
void train_sentencepiece(const std::vector<std::string>& args);

// Calls `visit` as dl_iterate_phdr would for each library of SentencePiece's link-map namespace
// (its own libc, libstdc++ and SentencePiece: sentencepiece_shim.h), which the process's
// dl_iterate_phdr does not list; nothing when no SentencePiece model was loaded yet (the shim
// is not loaded for this). For pipeline::release_library_pages.
using ObjectVisitor = int (*)(::dl_phdr_info* info, size_t size, void* data);
void for_each_sentencepiece_object(ObjectVisitor visit, void* data);

}  // namespace ordo::text
