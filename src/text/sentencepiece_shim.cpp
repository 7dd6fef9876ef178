// libordo_sentencepiece.so: SentencePiece behind a C interface (see sentencepiece_shim.h for
// why it is loaded with dlmopen). Every entry point catches every exception: none may cross.
#include "text/sentencepiece_shim.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#define ORDO_SHIM_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Processor = sentencepiece::SentencePieceProcessor;

char* copy_bytes(const char* data, size_t size) {
  char* out = static_cast<char*>(std::malloc(size + 1));
  if (out) {
    std::memcpy(out, data, size);
    out[size] = '\0';
  }
  return out;
}

char* copy_string(const std::string& s) { return copy_bytes(s.data(), s.size()); }

void set_error(char** error, const char* message) {
  if (error) *error = copy_bytes(message, std::strlen(message));
}

// The message of the exception being handled (call inside a catch block).
void set_current_error(char** error) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    set_error(error, "out of memory");
  } catch (const std::exception& e) {
    set_error(error, e.what());
  } catch (...) {
    set_error(error, "unknown exception in SentencePiece");
  }
}

const char* file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

ORDO_SHIM_EXPORT void* ordo_spm_load(const char* path, char** error) {
  try {
    // SentencePiece would block on a FIFO and report a directory as "basic_filebuf::underflow".
    struct stat st;
    if (::stat(path, &st) != 0) {
      set_error(error, std::strerror(errno));
      return nullptr;
    }
    if (!S_ISREG(st.st_mode)) {
      set_error(error, (std::string("is ") + file_type(st.st_mode) + ", not a model file").c_str());
      return nullptr;
    }
    auto processor = std::make_unique<Processor>();
    const auto status = processor->Load(path);
    if (!status.ok()) {
      set_error(error, status.ToString().c_str());
      return nullptr;
    }
    return processor.release();
  } catch (...) {
    set_current_error(error);
    return nullptr;
  }
}

ORDO_SHIM_EXPORT void ordo_spm_free(void* processor) {
  try {
    delete static_cast<Processor*>(processor);
  } catch (...) {
  }
}

ORDO_SHIM_EXPORT char* ordo_spm_encode(void* processor, const char* text, size_t length, size_t* size, char** error) {
  try {
    std::vector<std::string> pieces;
    const auto status = static_cast<Processor*>(processor)->Encode(std::string(text, length), &pieces);
    if (!status.ok()) {
      set_error(error, status.ToString().c_str());
      return nullptr;
    }
    // Each piece as its length (a size_t) and its bytes: a piece may hold a NUL byte.
    std::string joined;
    for (const std::string& piece : pieces) {
      const size_t n = piece.size();
      joined.append(reinterpret_cast<const char*>(&n), sizeof n);
      joined += piece;
    }
    char* out = copy_string(joined);
    if (!out) {
      set_error(error, "out of memory");
      return nullptr;
    }
    *size = joined.size();
    return out;
  } catch (...) {
    set_current_error(error);
    return nullptr;
  }
}

ORDO_SHIM_EXPORT char* ordo_spm_decode(void* processor, const char* pieces, size_t count, char** error) {
  try {
    std::vector<std::string> list;
    const char* p = pieces;
    for (size_t i = 0; i < count; ++i) {
      list.emplace_back(p);
      p += list.back().size() + 1;
    }
    std::string text;
    const auto status = static_cast<Processor*>(processor)->Decode(list, &text);
    if (!status.ok()) {
      set_error(error, status.ToString().c_str());
      return nullptr;
    }
    char* out = copy_string(text);
    if (!out) set_error(error, "out of memory");
    return out;
  } catch (...) {
    set_current_error(error);
    return nullptr;
  }
}

ORDO_SHIM_EXPORT void ordo_spm_free_string(char* text) { std::free(text); }

ORDO_SHIM_EXPORT int ordo_spm_piece_to_id(void* processor, const char* piece, char** error) {
  try {
    return static_cast<Processor*>(processor)->PieceToId(piece);
  } catch (...) {
    set_current_error(error);
    return -1;
  }
}

ORDO_SHIM_EXPORT char* ordo_spm_id_to_piece(void* processor, int id, char** error) {
  try {
    const auto* model = static_cast<Processor*>(processor);
    // SentencePiece does not check the range (an out-of-range id reads past its table).
    if (id < 0 || id >= model->GetPieceSize()) {
      set_error(error, ("id " + std::to_string(id) + " is outside the vocabulary [0, " +
                        std::to_string(model->GetPieceSize()) + ")")
                           .c_str());
      return nullptr;
    }
    char* out = copy_string(model->IdToPiece(id));
    if (!out) set_error(error, "out of memory");
    return out;
  } catch (...) {
    set_current_error(error);
    return nullptr;
  }
}

ORDO_SHIM_EXPORT int ordo_spm_piece_size(void* processor, char** error) {
  try {
    return static_cast<Processor*>(processor)->GetPieceSize();
  } catch (...) {
    set_current_error(error);
    return -1;
  }
}

ORDO_SHIM_EXPORT int ordo_spm_train(const char* const* keys, const char* const* values, size_t count, char** error) {
  try {
    std::unordered_map<std::string, std::string> options;
    for (size_t i = 0; i < count; ++i) options[keys[i]] = values[i];
    const auto status = sentencepiece::SentencePieceTrainer::Train(options);
    if (!status.ok()) {
      set_error(error, status.ToString().c_str());
      return -1;
    }
    return 0;
  } catch (...) {
    set_current_error(error);
    return -1;
  }
}
