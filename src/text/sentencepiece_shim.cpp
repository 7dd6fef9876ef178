// libordo_sentencepiece.so: SentencePiece behind a C interface (see sentencepiece_shim.h).
#include "text/sentencepiece_shim.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <sentencepiece_processor.h>

#define ORDO_SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

char* copy_string(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

void set_error(char** error, const std::string& message) {
  if (error) *error = copy_string(message);
}

}  // namespace

ORDO_SHIM_EXPORT void* ordo_spm_load(const char* path, char** error) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->Load(path);
  if (!status.ok()) {
    set_error(error, status.ToString());
    return nullptr;
  }
  return processor.release();
}

ORDO_SHIM_EXPORT void ordo_spm_free(void* processor) {
  delete static_cast<sentencepiece::SentencePieceProcessor*>(processor);
}

ORDO_SHIM_EXPORT char* ordo_spm_encode(void* processor, const char* text, size_t length, size_t* size, char** error) {
  std::vector<std::string> pieces;
  const auto status = static_cast<sentencepiece::SentencePieceProcessor*>(processor)->Encode(
      std::string(text, length), &pieces);
  if (!status.ok()) {
    set_error(error, status.ToString());
    return nullptr;
  }
  std::string joined;
  for (const std::string& piece : pieces) {
    joined += piece;
    joined.push_back('\0');
  }
  *size = joined.size();
  char* out = static_cast<char*>(std::malloc(joined.size() + 1));
  if (out) std::memcpy(out, joined.data(), joined.size());
  return out;
}

ORDO_SHIM_EXPORT char* ordo_spm_decode(void* processor, const char* pieces, size_t count, char** error) {
  std::vector<std::string> list;
  const char* p = pieces;
  for (size_t i = 0; i < count; ++i) {
    list.emplace_back(p);
    p += list.back().size() + 1;
  }
  std::string text;
  const auto status = static_cast<sentencepiece::SentencePieceProcessor*>(processor)->Decode(list, &text);
  if (!status.ok()) {
    set_error(error, status.ToString());
    return nullptr;
  }
  return copy_string(text);
}

ORDO_SHIM_EXPORT void ordo_spm_free_string(char* text) { std::free(text); }

ORDO_SHIM_EXPORT int ordo_spm_piece_to_id(void* processor, const char* piece) {
  return static_cast<sentencepiece::SentencePieceProcessor*>(processor)->PieceToId(piece);
}

ORDO_SHIM_EXPORT char* ordo_spm_id_to_piece(void* processor, int id) {
  return copy_string(static_cast<sentencepiece::SentencePieceProcessor*>(processor)->IdToPiece(id));
}

ORDO_SHIM_EXPORT int ordo_spm_piece_size(void* processor) {
  return static_cast<sentencepiece::SentencePieceProcessor*>(processor)->GetPieceSize();
}
