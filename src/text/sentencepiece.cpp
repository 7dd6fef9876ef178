#include "text/sentencepiece.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>

#include <sys/stat.h>
#include <algorithm>
#include <atomic>
#include <cstring>

#include <cstdlib>
#include <mutex>

#include "ordo/error.h"
#include "text/sentencepiece_shim.h"

namespace ordo::text {
namespace {

constexpr const char* kShimName = "libordo_sentencepiece.so";

struct Shim {
  ordo_spm_load_fn load = nullptr;
  ordo_spm_free_fn free = nullptr;
  ordo_spm_encode_fn encode = nullptr;
  ordo_spm_decode_fn decode = nullptr;
  ordo_spm_free_string_fn free_string = nullptr;
  ordo_spm_piece_to_id_fn piece_to_id = nullptr;
  ordo_spm_id_to_piece_fn id_to_piece = nullptr;
  ordo_spm_piece_size_fn piece_size = nullptr;
  ordo_spm_train_fn train = nullptr;
  void* library = nullptr;  // the dlmopen handle (never closed)
};

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

// Throws unless `path` is a regular file: SentencePiece would block forever on a FIFO and
// report a directory as "basic_filebuf::underflow".
void require_regular_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error(path + ": file not found (a SentencePiece model is needed)");
  if (S_ISREG(st.st_mode)) return;
  const char* type = S_ISDIR(st.st_mode)    ? "a directory"
                     : S_ISFIFO(st.st_mode) ? "a FIFO"
                     : S_ISCHR(st.st_mode)  ? "a character device"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                                            : "not a regular file";
  throw Error(path + ": is " + type + ", not a SentencePiece model file");
}

// The folder of the binary (libordo.so or an executable) that contains this code.
std::string own_dir() {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void*>(&own_dir), &info) == 0 || !info.dli_fname) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

Shim open_shim() {
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("ORDO_SENTENCEPIECE_SHIM"); env && *env) candidates.push_back(env);
  const std::string dir = own_dir();
  if (!dir.empty()) candidates.push_back(dir + "/" + kShimName);
  candidates.push_back(ORDO_SHIM_BUILD_PATH);
  candidates.push_back(ORDO_SHIM_INSTALL_PATH);

  std::string tried;
  for (const std::string& path : candidates) {
    if (!exists(path)) {
      tried += "\n  " + path + " (not found)";
      continue;
    }
    // A namespace of its own: SentencePiece's protobuf 3.14 never meets LibTorch's 3.21.
    void* library = ::dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      tried += "\n  " + path + " (" + ::dlerror() + ")";
      continue;
    }
    Shim shim;
    shim.load = reinterpret_cast<ordo_spm_load_fn>(::dlsym(library, "ordo_spm_load"));
    shim.free = reinterpret_cast<ordo_spm_free_fn>(::dlsym(library, "ordo_spm_free"));
    shim.encode = reinterpret_cast<ordo_spm_encode_fn>(::dlsym(library, "ordo_spm_encode"));
    shim.decode = reinterpret_cast<ordo_spm_decode_fn>(::dlsym(library, "ordo_spm_decode"));
    shim.free_string = reinterpret_cast<ordo_spm_free_string_fn>(::dlsym(library, "ordo_spm_free_string"));
    shim.piece_to_id = reinterpret_cast<ordo_spm_piece_to_id_fn>(::dlsym(library, "ordo_spm_piece_to_id"));
    shim.id_to_piece = reinterpret_cast<ordo_spm_id_to_piece_fn>(::dlsym(library, "ordo_spm_id_to_piece"));
    shim.piece_size = reinterpret_cast<ordo_spm_piece_size_fn>(::dlsym(library, "ordo_spm_piece_size"));
    shim.train = reinterpret_cast<ordo_spm_train_fn>(::dlsym(library, "ordo_spm_train"));
    shim.library = library;
    if (shim.load && shim.free && shim.encode && shim.decode && shim.free_string && shim.piece_to_id &&
        shim.id_to_piece && shim.piece_size && shim.train)
      return shim;
    tried += "\n  " + path + " (missing ordo_spm_* symbols: a stale build?)";
  }
  throw Error("cannot load the SentencePiece shim " + std::string(kShimName) + "; tried:" + tried +
              "\nSet ORDO_SENTENCEPIECE_SHIM to its path.");
}

// Set once the shim is loaded (and stays so): for_each_sentencepiece_object does not load it.
std::atomic<const Shim*> loaded_shim{nullptr};

const Shim& shim() {
  static std::once_flag once;
  static Shim instance;
  static std::string failure;
  std::call_once(once, [] {
    try {
      instance = open_shim();
      loaded_shim.store(&instance, std::memory_order_release);
    } catch (const Error& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) throw Error(failure);
  return instance;
}

std::string take_error(char* error) {
  std::string message = error ? error : "unknown error";
  if (error) shim().free_string(error);
  return message;
}

}  // namespace

void for_each_sentencepiece_object(ObjectVisitor visit, void* data) {
  const Shim* loaded = loaded_shim.load(std::memory_order_acquire);
  link_map* object = nullptr;
  if (!loaded || ::dlinfo(loaded->library, RTLD_DI_LINKMAP, &object) != 0 || !object) return;
  while (object->l_prev) object = object->l_prev;
  // glibc's dl_iterate_phdr lists the caller's namespace only (from the shim too, in glibc
  // 2.36: it listed the process's), so the namespace's objects are walked through the handle's
  // link map. Each object's program headers are read where the loader mapped its ELF header,
  // the start of its first segment (file offset 0 at address l_addr for a shared library);
  // an object where no ELF header is found there is skipped. Nothing in the namespace is ever
  // unloaded, and nothing loads into it after the shim.
  for (; object; object = object->l_next) {
    const auto* header = reinterpret_cast<const ElfW(Ehdr)*>(object->l_addr);
    if (!object->l_name || !object->l_name[0] || object->l_addr == 0 ||
        std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_phentsize != sizeof(ElfW(Phdr)))
      continue;
    dl_phdr_info info{};
    info.dlpi_addr = object->l_addr;
    info.dlpi_name = object->l_name;
    info.dlpi_phdr = reinterpret_cast<const ElfW(Phdr)*>(object->l_addr + header->e_phoff);
    info.dlpi_phnum = header->e_phnum;
    visit(&info, sizeof info, data);
  }
}

SentencePiece::SentencePiece(const std::string& path) : path_(path) {
  require_regular_file(path);
  char* error = nullptr;
  handle_ = shim().load(path.c_str(), &error);
  if (!handle_) throw Error(path + ": cannot load SentencePiece model (" + take_error(error) + ")");
}

SentencePiece::~SentencePiece() {
  if (handle_) shim().free(handle_);
}

std::vector<std::string> SentencePiece::encode(const std::string& text) const {
  char* error = nullptr;
  size_t size = 0;
  char* joined = shim().encode(handle_, text.data(), text.size(), &size, &error);
  if (!joined) throw Error(path_ + ": SentencePiece encoding failed (" + take_error(error) + ")");
  std::vector<std::string> pieces;
  for (size_t start = 0; start + sizeof(size_t) <= size;) {  // length-prefixed pieces (sentencepiece_shim.h)
    size_t n = 0;
    std::memcpy(&n, joined + start, sizeof n);
    start += sizeof n;
    n = std::min(n, size - start);
    pieces.emplace_back(joined + start, n);
    start += n;
  }
  shim().free_string(joined);
  return pieces;
}

std::string SentencePiece::decode(const std::vector<std::string>& pieces) const {
  std::string joined;
  for (const std::string& piece : pieces) {
    joined += piece;
    joined.push_back('\0');
  }
  char* error = nullptr;
  char* text = shim().decode(handle_, joined.data(), pieces.size(), &error);
  if (!text) throw Error(path_ + ": SentencePiece decoding failed (" + take_error(error) + ")");
  std::string out = text;
  shim().free_string(text);
  return out;
}

int SentencePiece::piece_to_id(const std::string& piece) const {
  char* error = nullptr;
  const int id = shim().piece_to_id(handle_, piece.c_str(), &error);
  if (id < 0) throw Error(path_ + ": SentencePiece lookup of '" + piece + "' failed (" + take_error(error) + ")");
  return id;
}

std::string SentencePiece::id_to_piece(int id) const {
  char* error = nullptr;
  char* piece = shim().id_to_piece(handle_, id, &error);
  if (!piece) throw Error(path_ + ": " + take_error(error));
  std::string out = piece;
  shim().free_string(piece);
  return out;
}

int SentencePiece::size() const {
  char* error = nullptr;
  const int size = shim().piece_size(handle_, &error);
  if (size < 0) throw Error(path_ + ": " + take_error(error));
  return size;
}

void train_sentencepiece(const std::vector<std::string>& args) {
  std::vector<std::string> keys, values;
  for (const std::string& arg : args) {
    const size_t start = arg.rfind("--", 0) == 0 ? 2 : 0;
    const size_t eq = arg.find('=', start);
    if (eq == std::string::npos || eq == start)
      throw Error("SentencePiece trainer option '" + arg + "' is not --key=value");
    keys.push_back(arg.substr(start, eq - start));
    values.push_back(arg.substr(eq + 1));
  }
  std::vector<const char*> key_pointers, value_pointers;
  for (size_t i = 0; i < keys.size(); ++i) {
    key_pointers.push_back(keys[i].c_str());
    value_pointers.push_back(values[i].c_str());
  }
  char* error = nullptr;
  if (shim().train(key_pointers.data(), value_pointers.data(), keys.size(), &error) != 0)
    throw Error("SentencePiece training failed (" + take_error(error) + ")");
}

}  // namespace ordo::text
