#include "models/packed_cache.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <dnnl.hpp>
#include <nlohmann/json.hpp>
#include <xxhash.h>

namespace ordo::models {
namespace {

using nlohmann::json;

constexpr char kMagic[8] = {'O', 'R', 'D', 'O', 'P', 'A', 'C', 'K'};
constexpr int kFormat = 1;
constexpr size_t kAlign = 4096;  // every part starts on a page: oneDNN reads weights in place

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

const char* type_name(nn::GemmType type) {
  switch (type) {
    case nn::GemmType::kFloat32: return "float32";
    case nn::GemmType::kBFloat16: return "bfloat16";
    case nn::GemmType::kInt8: return "int8";
  }
  return "?";
}

// Adds a file's bytes to the hash, read (not mapped: no page faults in this process, nothing
// added to its resident set) in 8 MB chunks. False if it cannot be read.
bool hash_file(const std::string& path, XXH3_state_t* state) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::vector<char> buffer(8 << 20);
  bool ok = true;
  for (;;) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    XXH3_128bits_update(state, buffer.data(), static_cast<size_t>(n));
  }
  ::close(fd);
  return ok;
}

// A read-only private mapping of a whole file, unmapped when the last user lets go (packed
// weights point into it).
struct Mapping {
  const uint8_t* data = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (data) ::munmap(const_cast<uint8_t*>(data), size);
  }
};

std::shared_ptr<const Mapping> map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat st;
  auto mapping = std::make_shared<Mapping>();
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    void* p = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
      mapping->data = static_cast<const uint8_t*>(p);
      mapping->size = static_cast<size_t>(st.st_size);
    }
  }
  ::close(fd);
  return mapping->data ? mapping : nullptr;
}

bool make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace

std::string default_packed_cache_dir() {
  if (const char* dir = std::getenv("ORDO_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/ordo";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ordo";
  return "";
}

bool packed_cache_disabled_by_environment() {
  const char* value = std::getenv("ORDO_WEIGHT_CACHE");
  if (!value) return false;
  const std::string v = value;
  return v == "0" || v == "off" || v == "false" || v == "no";
}

std::string packed_cache_path(const std::string& dir, const std::string& checkpoint_path,
                              const std::string& config_path, nn::GemmType type) {
  XXH3_state_t* state = XXH3_createState();
  if (!state) return "";
  XXH3_128bits_reset(state);
  const bool read = hash_file(checkpoint_path, state) && hash_file(config_path, state);
  const dnnl_version_t* v = dnnl_version();
  const std::string context = std::string("ordo-packed format ") + std::to_string(kFormat) + " type " + type_name(type) +
                              " onednn " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." +
                              std::to_string(v->patch) + " " + v->hash + " isa " +
                              std::to_string(static_cast<int>(dnnl_get_effective_cpu_isa())) + " md " +
                              std::to_string(sizeof(dnnl_memory_desc_t));
  XXH3_128bits_update(state, context.data(), context.size());
  const XXH128_hash_t digest = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  if (!read) return "";
  char name[64];
  std::snprintf(name, sizeof(name), "%016llx%016llx", static_cast<unsigned long long>(digest.high64),
                static_cast<unsigned long long>(digest.low64));
  return dir + "/" + name + "-" + type_name(type) + ".ordo-packed";
}

bool save_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type) {
  struct Blob {
    const void* data;
    size_t bytes, offset;
  };
  std::vector<Blob> blobs;
  size_t end = 0;
  const auto add = [&](const void* data, size_t bytes) {
    const size_t offset = align_up(end);
    blobs.push_back({data, bytes, offset});
    end = offset + bytes;
    return json::array({offset, bytes});
  };
  bool ok = true;
  std::vector<at::Tensor> keep;  // contiguous copies stay alive until written
  json tensors = json::array(), absent = json::array();
  model.visit([&](const std::string& name, at::Tensor& param) {
    if (!param.defined()) {
      absent.push_back(name);
      return;
    }
    const at::Tensor t = param.contiguous();
    if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16) ok = false;
    keep.push_back(t);
    tensors.push_back({{"name", name},
                       {"dtype", t.scalar_type() == at::kFloat ? "f32" : "bf16"},
                       {"shape", t.sizes().vec()},
                       {"data", add(t.data_ptr(), t.nbytes())}});
  });
  std::deque<nn::PackedGemm::Image> images;  // blobs point into them: no reallocation
  json linears = json::array();
  model.visit_linears([&](const std::string& name, nn::Linear& linear) {
    if (!linear.packed) {
      if (linear.weight.defined()) ok = false;  // an unpacked GEMM: nothing to cache it as
      linears.push_back({{"name", name}, {"empty", true}});
      return;
    }
    images.push_back(linear.packed->image());
    const nn::PackedGemm::Image& image = images.back();
    linears.push_back({{"name", name},
                       {"type", static_cast<int>(image.type)},
                       {"in", image.in},
                       {"out", image.out},
                       {"activation", image.activation ? static_cast<int>(*image.activation) : -1},
                       {"fused_activation", linear.fused_activation},
                       {"rows_readable", image.rows_readable},
                       {"layout", add(image.layout.data(), image.layout.size())},
                       {"weights", add(image.weights, image.weight_bytes)},
                       {"scales", add(image.weight_scales.data(), image.weight_scales.size() * sizeof(float))},
                       {"bias", add(image.bias.data(), image.bias.size() * sizeof(float))}});
  });
  const auto lookup = [&](const nn::Embedder& e) -> std::string {
    if (e.tokens.defined()) return "table";
    if (e.packed_rows) return "packed";
    ok = false;
    return "";
  };
  const json header = {{"format", kFormat},
                       {"type", type_name(type)},
                       {"data_bytes", end},
                       {"tensors", tensors},
                       {"absent", absent},
                       {"linears", linears},
                       {"encoder_embedding", lookup(model.encoder().embed)},
                       {"decoder_embedding", lookup(model.decoder().embed)}};
  if (!ok) return false;
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && !make_dirs(path.substr(0, slash))) return false;

  const std::string text = header.dump();
  const uint64_t header_bytes = text.size();
  const size_t data_start = align_up(sizeof(kMagic) + sizeof(header_bytes) + text.size());
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out.write(kMagic, sizeof(kMagic));
    out.write(reinterpret_cast<const char*>(&header_bytes), sizeof(header_bytes));
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    size_t at = sizeof(kMagic) + sizeof(header_bytes) + text.size();
    const std::vector<char> zeros(kAlign, 0);
    for (const Blob& blob : blobs) {
      const size_t target = data_start + blob.offset;
      out.write(zeros.data(), static_cast<std::streamsize>(target - at));
      out.write(static_cast<const char*>(blob.data), static_cast<std::streamsize>(blob.bytes));
      at = target + blob.bytes;
    }
    out.write(zeros.data(), static_cast<std::streamsize>(data_start + end - at));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool restore_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type) {
  const std::shared_ptr<const Mapping> file = map_file(path);
  if (!file) return false;
  uint64_t header_bytes = 0;
  if (file->size < sizeof(kMagic) + sizeof(header_bytes) || std::memcmp(file->data, kMagic, sizeof(kMagic)) != 0)
    return false;
  std::memcpy(&header_bytes, file->data + sizeof(kMagic), sizeof(header_bytes));
  if (header_bytes > file->size - sizeof(kMagic) - sizeof(header_bytes)) return false;
  json header;
  try {
    header = json::parse(file->data + sizeof(kMagic) + sizeof(header_bytes),
                         file->data + sizeof(kMagic) + sizeof(header_bytes) + header_bytes);
    if (header.at("format").get<int>() != kFormat || header.at("type").get<std::string>() != type_name(type))
      return false;
    const size_t data_start = align_up(sizeof(kMagic) + sizeof(header_bytes) + header_bytes);
    const size_t data_bytes = header.at("data_bytes").get<size_t>();
    if (data_start + data_bytes != file->size) return false;  // truncated, or grown
    const uint8_t* data = file->data + data_start;
    bool ok = true;
    // A part's bytes, after checking they lie inside the file.
    const auto part = [&](const json& range, size_t* bytes) -> const uint8_t* {
      const size_t offset = range.at(0).get<size_t>(), n = range.at(1).get<size_t>();
      if (offset > data_bytes || n > data_bytes - offset) {
        ok = false;
        return nullptr;
      }
      *bytes = n;
      return data + offset;
    };

    std::map<std::string, const json*> tensors;
    for (const json& t : header.at("tensors")) tensors[t.at("name").get<std::string>()] = &t;
    std::set<std::string> absent, unvisited;
    for (const json& name : header.at("absent")) absent.insert(name.get<std::string>());
    model.visit([&](const std::string& name, at::Tensor& param) {
      if (absent.count(name)) {
        param = at::Tensor();
        return;
      }
      const auto it = tensors.find(name);
      if (it == tensors.end()) {  // must be a parameter of a GEMM saved as empty (checked below)
        unvisited.insert(name);
        param = at::Tensor();
        return;
      }
      const json& t = *it->second;
      const at::ScalarType dtype = t.at("dtype").get<std::string>() == "f32" ? at::kFloat : at::kBFloat16;
      const std::vector<int64_t> shape = t.at("shape").get<std::vector<int64_t>>();
      size_t bytes = 0;
      const uint8_t* source = part(t.at("data"), &bytes);
      if (!ok || !param.defined() || shape != param.sizes().vec()) {
        ok = false;
        return;
      }
      at::Tensor value = at::empty(shape, dtype);
      if (static_cast<size_t>(value.nbytes()) != bytes) {
        ok = false;
        return;
      }
      std::memcpy(value.data_ptr(), source, bytes);
      param = value;
    });
    if (!ok) return false;

    std::map<std::string, const json*> linears;
    for (const json& l : header.at("linears")) linears[l.at("name").get<std::string>()] = &l;
    model.visit_linears([&](const std::string& name, nn::Linear& linear) {
      const auto it = linears.find(name);
      if (!ok || it == linears.end()) {
        ok = false;
        return;
      }
      const json& l = *it->second;
      if (l.contains("empty")) {
        linear = nn::Linear();
        const std::string prefix = name + ".";
        for (auto u = unvisited.lower_bound(prefix); u != unvisited.end() && u->compare(0, prefix.size(), prefix) == 0;)
          u = unvisited.erase(u);
        return;
      }
      nn::PackedGemm::Image image;
      image.type = static_cast<nn::GemmType>(l.at("type").get<int>());
      image.in = l.at("in").get<int64_t>();
      image.out = l.at("out").get<int64_t>();
      const int activation = l.at("activation").get<int>();
      if (activation >= 0) image.activation = static_cast<nn::Activation>(activation);
      image.rows_readable = l.at("rows_readable").get<bool>();
      size_t bytes = 0;
      const uint8_t* layout = part(l.at("layout"), &bytes);
      if (layout) image.layout.assign(layout, layout + bytes);
      image.weights = part(l.at("weights"), &image.weight_bytes);
      const auto floats = [&](const char* key) {
        size_t n = 0;
        const uint8_t* p = part(l.at(key), &n);
        std::vector<float> values(n / sizeof(float));
        if (p && n) std::memcpy(values.data(), p, values.size() * sizeof(float));
        return values;
      };
      image.weight_scales = floats("scales");
      image.bias = floats("bias");
      if (!ok || image.type != type) {
        ok = false;
        return;
      }
      std::shared_ptr<const nn::PackedGemm> gemm = nn::PackedGemm::from_image(image, file);
      if (!gemm) {
        ok = false;
        return;
      }
      linear.packed = std::move(gemm);
      linear.fused_activation = l.at("fused_activation").get<bool>();
      linear.weight = at::Tensor();
    });
    if (!ok) return false;

    std::shared_ptr<const nn::PackedGemm> output;
    model.visit_linears([&](const std::string& name, nn::Linear& linear) {
      if (name == "lm_head") output = linear.packed;
    });
    if (!unvisited.empty()) return false;  // a parameter the file does not have
    const auto restore_lookup = [&](nn::Embedder& e, const std::string& how) {
      if (how == "table") {
        ok = ok && e.tokens.defined();
      } else if (how == "packed" && output && output->rows_readable() && !e.tokens.defined()) {
        e.packed_rows = output;
      } else {
        ok = false;
      }
    };
    restore_lookup(model.encoder().embed, header.at("encoder_embedding").get<std::string>());
    restore_lookup(model.decoder().embed, header.at("decoder_embedding").get<std::string>());
    return ok;
  } catch (const json::exception&) {
    return false;
  }
}

}  // namespace ordo::models
