#include "models/packed_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include <dnnl.hpp>
#include <xxhash.h>

#include "io/packed_weights_file.h"
#include "io/verified_file.h"
#include "ordo/error.h"

namespace ordo::models {
namespace {

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
  const std::string context = std::string("ordo-packed format ") + std::to_string(io::kPackedWeightsFormat) + " type " + type_name(type) +
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
  io::PackedWeights weights;
  weights.compute_type = type_name(type);
  std::string problem;  // a part the cache cannot hold
  std::vector<at::Tensor> keep;  // contiguous copies stay alive until written
  model.visit([&](const std::string& name, at::Tensor& param) {
    if (!param.defined()) {
      weights.absent.push_back(name);
      return;
    }
    const at::Tensor t = param.contiguous();
    if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16) problem = "tensor '" + name + "' is not float";
    keep.push_back(t);
    weights.tensors.push_back({name, t.scalar_type() == at::kFloat ? io::DType::F32 : io::DType::BF16, t.sizes().vec(),
                               t.data_ptr(), t.nbytes()});
  });
  model.visit_linears([&](const std::string& name, nn::Linear& linear) {
    io::PackedGemmData gemm;
    gemm.name = name;
    if (!linear.packed) {
      if (linear.weight.defined()) problem = "GEMM '" + name + "' is not packed";
      gemm.empty = true;
      weights.gemms.push_back(std::move(gemm));
      return;
    }
    nn::PackedGemm::Image image = linear.packed->image();
    gemm.type = static_cast<int>(image.type);
    gemm.in = image.in;
    gemm.out = image.out;
    gemm.activation = image.activation ? static_cast<int>(*image.activation) : -1;
    gemm.fused_activation = linear.fused_activation;
    gemm.rows_readable = image.rows_readable;
    gemm.layout = std::move(image.layout);
    gemm.weights = image.weights;  // the PackedGemm's own memory, alive with the model
    gemm.weight_bytes = image.weight_bytes;
    gemm.scales = std::move(image.weight_scales);
    gemm.bias = std::move(image.bias);
    weights.gemms.push_back(std::move(gemm));
  });
  const auto lookup = [&](const nn::Embedder& e) -> std::string {
    if (e.tokens.defined()) return "table";
    if (e.packed_rows) return "packed";
    problem = "an embedding is neither a table nor packed rows";
    return "";
  };
  weights.encoder_embedding = lookup(model.encoder().embed);
  weights.decoder_embedding = lookup(model.decoder().embed);
  const auto fail = [&](const std::string& message) {
    if (why) *why = message;
    return false;
  };
  if (!problem.empty()) return fail(path + ": not written: " + problem);
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && !make_dirs(path.substr(0, slash)))
    return fail(path.substr(0, slash) + ": cannot create the cache folder (" + std::strerror(errno) + ")");
  try {
    io::write_packed_weights(path, weights);
  } catch (const Error& e) {
    return fail(e.what());
  }
  return true;
}

bool restore_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) return false;  // a plain miss
  try {
    // Checked there: size, checksum, ranges, byte counts, every float finite.
    const io::PackedWeights file = io::read_packed_weights(path, type_name(type), max_cache_bytes(model));
    const auto fail = [&](const std::string& problem) { throw Error(path + ": " + problem); };
    const std::shared_ptr<const void> owner = file.owner;

    std::map<std::string, const io::PackedTensor*> tensors;
    for (const io::PackedTensor& t : file.tensors) tensors[t.name] = &t;
    const std::set<std::string> absent(file.absent.begin(), file.absent.end());
    std::set<std::string> unvisited;
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
      const io::PackedTensor& t = *it->second;
      if (!param.defined() || t.shape != param.sizes().vec()) fail("tensor '" + name + "' does not fit the model");
      // A view of the file's memory, which it keeps alive (no copy).
      param = at::from_blob(const_cast<void*>(t.data), t.shape, [owner](void*) { (void)owner; },
                            at::TensorOptions().dtype(t.dtype == io::DType::F32 ? at::kFloat : at::kBFloat16));
    });

    std::map<std::string, const io::PackedGemmData*> gemms;
    for (const io::PackedGemmData& g : file.gemms) gemms[g.name] = &g;
    model.visit_linears([&](const std::string& name, nn::Linear& linear) {
      const auto it = gemms.find(name);
      if (it == gemms.end()) fail("GEMM '" + name + "' is missing");
      const io::PackedGemmData& g = *it->second;
      if (g.empty) {
        linear = nn::Linear();
        const std::string prefix = name + ".";
        for (auto u = unvisited.lower_bound(prefix); u != unvisited.end() && u->compare(0, prefix.size(), prefix) == 0;)
          u = unvisited.erase(u);
        return;
      }
      if (g.type != static_cast<int>(type)) fail("GEMM '" + name + "' is packed for another compute type");
      if (g.activation < -1 || g.activation > static_cast<int>(nn::Activation::kTanh))
        fail("GEMM '" + name + "' has activation " + std::to_string(g.activation));
      nn::PackedGemm::Image image;
      image.type = type;
      image.in = g.in;
      image.out = g.out;
      if (g.activation >= 0) image.activation = static_cast<nn::Activation>(g.activation);
      image.rows_readable = g.rows_readable;
      image.layout = g.layout;
      image.weights = g.weights;
      image.weight_bytes = g.weight_bytes;
      image.weight_scales = g.scales;
      image.bias = g.bias;
      std::shared_ptr<const nn::PackedGemm> gemm = nn::PackedGemm::from_image(image, owner);
      if (!gemm) fail("GEMM '" + name + "' is not laid out as oneDNN lays it out here (another CPU or oneDNN?)");
      linear.packed = std::move(gemm);
      linear.fused_activation = g.fused_activation;
      linear.weight = at::Tensor();
    });

    // The lookups read packed rows of the output projection (a tied table) or of the int8 copy of
    // an untied one (embed_lookup, Seq2SeqModel::compact_embeddings).
    std::shared_ptr<const nn::PackedGemm> output;
    model.visit_linears([&](const std::string& name, nn::Linear& linear) {
      if (name == "lm_head" && !output) output = linear.packed;
      if (name == "embed_lookup" && linear.packed) output = linear.packed;
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
    restore_lookup(model.encoder().embed, file.encoder_embedding);
    restore_lookup(model.decoder().embed, file.decoder_embedding);
    return true;
  } catch (const Error& e) {
    if (why) *why = e.what();
  } catch (const c10::Error& e) {
    if (why) *why = path + ": does not fit the model (" + std::string(e.what_without_backtrace()).substr(0, 200) + ")";
  }
  return false;
}

}  // namespace ordo::models
