#include "models/packed_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <set>
#include <vector>

#include <dnnl.hpp>
#include <nlohmann/json.hpp>
#include <xxhash.h>

#include "io/safetensors.h"
#include "io/verified_file.h"
#include "ordo/error.h"

namespace ordo::models {
namespace {

using nlohmann::json;

const std::string kMagic = "ORDOPACK";
constexpr int kFormat = 2;  // 2: an io::VerifiedFile (checksum, read into owned memory)

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
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
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

bool make_dirs(const std::string& dir) {
  for (size_t at = 1; at <= dir.size(); ++at) {
    if (at != dir.size() && dir[at] != '/') continue;
    const std::string part = dir.substr(0, at);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

// The most a cache file of `model` can take: its parameters in float32 twice over (oneDNN's
// blocked layouts pad), a page per part, and the header. A larger file is refused unread.
size_t max_cache_bytes(Seq2SeqModel& model) {
  size_t values = 0, parts = 0;
  model.visit([&](const std::string&, at::Tensor& param) {
    if (param.defined()) values += static_cast<size_t>(param.numel());
    ++parts;
  });
  model.visit_linears([&](const std::string&, nn::Linear&) { parts += 4; });
  return 2 * values * sizeof(float) + parts * io::kVerifiedFileAlign + (size_t{16} << 20);
}

// Throws ordo::Error when `count` values of `dtype` at `data` hold a NaN or an infinity: a
// cache hit keeps the guarantee a checkpoint gives (seq2seq_model.cpp, check_finite).
void check_finite(io::DType dtype, const void* data, size_t count, const std::string& what) {
  const int64_t at = io::first_non_finite(dtype, data, count);
  if (at >= 0) throw Error(what + " holds NaN or an infinity (element " + std::to_string(at) + ")");
}

}  // namespace

std::string default_packed_cache_dir() {
  if (const char* dir = std::getenv("ORDO_CACHE_DIR"); dir && *dir) return dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/ordo";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/ordo";
  return "";
}

PackedCacheEnvironment packed_cache_environment() {
  const char* value = std::getenv("ORDO_WEIGHT_CACHE");
  if (!value) return PackedCacheEnvironment::kDefault;
  const std::string v = value;
  if (v == "0" || v == "off" || v == "false" || v == "no") return PackedCacheEnvironment::kOff;
  return v == "always" ? PackedCacheEnvironment::kAlways : PackedCacheEnvironment::kDefault;
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

bool save_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why) {
  io::VerifiedFileWriter file;
  std::string problem;  // a part the cache cannot hold
  std::vector<at::Tensor> keep;  // contiguous copies stay alive until written
  json tensors = json::array(), absent = json::array();
  model.visit([&](const std::string& name, at::Tensor& param) {
    if (!param.defined()) {
      absent.push_back(name);
      return;
    }
    const at::Tensor t = param.contiguous();
    if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16) problem = "tensor '" + name + "' is not float";
    keep.push_back(t);
    tensors.push_back({{"name", name},
                       {"dtype", t.scalar_type() == at::kFloat ? "f32" : "bf16"},
                       {"shape", t.sizes().vec()},
                       {"data", file.add(t.data_ptr(), t.nbytes())}});
  });
  std::deque<nn::PackedGemm::Image> images;  // parts point into them: no reallocation
  json linears = json::array();
  model.visit_linears([&](const std::string& name, nn::Linear& linear) {
    if (!linear.packed) {
      if (linear.weight.defined()) problem = "GEMM '" + name + "' is not packed";
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
                       {"layout", file.add(image.layout.data(), image.layout.size())},
                       {"weights", file.add(image.weights, image.weight_bytes)},
                       {"scales", file.add(image.weight_scales.data(), image.weight_scales.size() * sizeof(float))},
                       {"bias", file.add(image.bias.data(), image.bias.size() * sizeof(float))}});
  });
  const auto lookup = [&](const nn::Embedder& e) -> std::string {
    if (e.tokens.defined()) return "table";
    if (e.packed_rows) return "packed";
    problem = "an embedding is neither a table nor packed rows";
    return "";
  };
  const json header = {{"format", kFormat},
                       {"type", type_name(type)},
                       {"tensors", tensors},
                       {"absent", absent},
                       {"linears", linears},
                       {"encoder_embedding", lookup(model.encoder().embed)},
                       {"decoder_embedding", lookup(model.decoder().embed)}};
  const auto fail = [&](const std::string& message) {
    if (why) *why = message;
    return false;
  };
  if (!problem.empty()) return fail(path + ": not written: " + problem);
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && !make_dirs(path.substr(0, slash)))
    return fail(path.substr(0, slash) + ": cannot create the cache folder (" + std::strerror(errno) + ")");
  try {
    file.write(path, kMagic, header);
  } catch (const Error& e) {
    return fail(e.what());
  }
  return true;
}

bool restore_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) return false;  // a plain miss
  try {
    const io::VerifiedFile file = io::read_verified_file(path, kMagic, max_cache_bytes(model));
    const json& header = file.header;
    const auto fail = [&](const std::string& problem) { throw Error(path + ": " + problem); };
    if (header.at("format").get<int>() != kFormat) fail("cache format " + header.at("format").dump() + ", not " + std::to_string(kFormat));
    if (header.at("type").get<std::string>() != type_name(type))
      fail("packed for " + header.at("type").get<std::string>() + ", not " + type_name(type));
    const std::shared_ptr<const void> owner = file.data;  // every part lives in file.data
    const auto part = [&](const json& range, size_t* bytes) {
      try {
        return file.part(range, bytes);
      } catch (const Error& e) {
        fail(e.what());
      }
      return static_cast<const uint8_t*>(nullptr);
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
      const std::string dtype_text = t.at("dtype").get<std::string>();
      if (dtype_text != "f32" && dtype_text != "bf16") fail("tensor '" + name + "' has dtype '" + dtype_text + "'");
      const bool f32 = dtype_text == "f32";
      const std::vector<int64_t> shape = t.at("shape").get<std::vector<int64_t>>();
      size_t bytes = 0;
      const uint8_t* source = part(t.at("data"), &bytes);
      if (!param.defined() || shape != param.sizes().vec()) fail("tensor '" + name + "' does not fit the model");
      const size_t count = static_cast<size_t>(param.numel());
      if (count * (f32 ? 4 : 2) != bytes) fail("tensor '" + name + "' has " + std::to_string(bytes) + " bytes");
      check_finite(f32 ? io::DType::F32 : io::DType::BF16, source, count, "tensor '" + name + "'");
      // A view of the file's memory, which it keeps alive (no copy).
      param = at::from_blob(const_cast<uint8_t*>(source), shape, [owner](void*) {},
                            at::TensorOptions().dtype(f32 ? at::kFloat : at::kBFloat16));
    });

    std::map<std::string, const json*> linears;
    for (const json& l : header.at("linears")) linears[l.at("name").get<std::string>()] = &l;
    model.visit_linears([&](const std::string& name, nn::Linear& linear) {
      const auto it = linears.find(name);
      if (it == linears.end()) fail("GEMM '" + name + "' is missing");
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
      if (image.type != type) fail("GEMM '" + name + "' is packed for another compute type");
      image.in = l.at("in").get<int64_t>();
      image.out = l.at("out").get<int64_t>();
      const int activation = l.at("activation").get<int>();
      if (activation < -1 || activation > static_cast<int>(nn::Activation::kTanh))
        fail("GEMM '" + name + "' has activation " + std::to_string(activation));
      if (activation >= 0) image.activation = static_cast<nn::Activation>(activation);
      image.rows_readable = l.at("rows_readable").get<bool>();
      size_t bytes = 0;
      const uint8_t* layout = part(l.at("layout"), &bytes);
      image.layout.assign(layout, layout + bytes);
      image.weights = part(l.at("weights"), &image.weight_bytes);
      if (type != nn::GemmType::kInt8) {
        const bool f32 = type == nn::GemmType::kFloat32;
        check_finite(f32 ? io::DType::F32 : io::DType::BF16, image.weights, image.weight_bytes / (f32 ? 4 : 2),
                     "GEMM '" + name + "' weights");
      }
      const auto floats = [&](const char* key) {
        size_t n = 0;
        const uint8_t* p = part(l.at(key), &n);
        std::vector<float> values(n / sizeof(float));
        if (!values.empty()) std::memcpy(values.data(), p, values.size() * sizeof(float));
        check_finite(io::DType::F32, values.data(), values.size(), "GEMM '" + name + "' " + key);
        return values;
      };
      image.weight_scales = floats("scales");
      image.bias = floats("bias");
      std::shared_ptr<const nn::PackedGemm> gemm = nn::PackedGemm::from_image(image, owner);
      if (!gemm) fail("GEMM '" + name + "' is not laid out as oneDNN lays it out here (another CPU or oneDNN?)");
      linear.packed = std::move(gemm);
      linear.fused_activation = l.at("fused_activation").get<bool>();
      linear.weight = at::Tensor();
    });

    std::shared_ptr<const nn::PackedGemm> output;
    model.visit_linears([&](const std::string& name, nn::Linear& linear) {
      if (name == "lm_head") output = linear.packed;
    });
    if (!unvisited.empty()) fail("tensor '" + *unvisited.begin() + "' is missing");
    const auto restore_lookup = [&](nn::Embedder& e, const std::string& how) {
      if (how == "table" && e.tokens.defined()) return;
      if (how == "packed" && output && output->rows_readable() && !e.tokens.defined()) {
        e.packed_rows = output;
        return;
      }
      fail("an embedding lookup ('" + how + "') does not fit the model");
    };
    restore_lookup(model.encoder().embed, header.at("encoder_embedding").get<std::string>());
    restore_lookup(model.decoder().embed, header.at("decoder_embedding").get<std::string>());
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
  } catch (const json::exception& e) {
    if (why) *why = path + ": malformed header (" + e.what() + ")";
  } catch (const c10::Error& e) {
    if (why) *why = path + ": does not fit the model (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")";
  }
  return false;
}

}  // namespace ordo::models
