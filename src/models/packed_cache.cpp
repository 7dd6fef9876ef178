#include "models/packed_cache.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include <ATen/Parallel.h>
#include <xxhash.h>
#include <dnnl.hpp>

#include "io/packed_weights_file.h"
#include "io/verified_file.h"
#include "ordo/error.h"

namespace ordo::models {
namespace {

// Adds a file's bytes to the hash, read (not mapped: no page faults in this process, nothing
// added to its resident set) in 8 MB chunks. False if it cannot be read. `before` / `after`,
// when given, get the file's stat() from before and after the read.
bool hash_file(const std::string& path, XXH3_state_t* state, struct stat* before = nullptr,
               struct stat* after = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return false;
  }
  if (before) *before = st;
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
  if (after && ::fstat(fd, after) != 0) ok = false;
  ::close(fd);
  return ok;
}

std::string hex(const XXH128_hash_t& digest) {
  char text[40];
  std::snprintf(text, sizeof(text), "%016llx%016llx", static_cast<unsigned long long>(digest.high64),
                static_cast<unsigned long long>(digest.low64));
  return text;
}

// What identifies a file's content without reading it, as long as nobody forges timestamps:
// device, inode, size, modification and status-change times (ns), and the resolved path.
// Any write changes mtime, and ctime too (which no user can set back); replacing the file
// changes the inode.
std::string fingerprint(const struct stat& st, const std::string& real_path) {
  const auto ns = [](const struct timespec& t) {
    return std::to_string(static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec);
  };
  return std::to_string(st.st_dev) + " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_size) + " " +
         ns(st.st_mtim) + " " + ns(st.st_ctim) + " " + real_path;
}

bool same_file_state(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

bool make_dirs(const std::string& dir);

constexpr const char* kHashIndex = "checkpoint-hashes";  // in the cache folder
constexpr size_t kHashIndexEntries = 64;
constexpr int64_t kSettledNs = int64_t{2} * 1000000000;  // see content_hash

// Lines "<32 hex digits> <fingerprint>" of the cache folder's hash index, oldest first; an
// unreadable, oversized or odd index is empty (everything is hashed again).
std::vector<std::string> read_hash_index(const std::string& dir) {
  std::vector<std::string> lines;
  std::FILE* f = std::fopen((dir + "/" + kHashIndex).c_str(), "re");
  if (!f) return lines;
  char line[8192];
  while (lines.size() < 4 * kHashIndexEntries && std::fgets(line, sizeof(line), f)) {
    std::string entry = line;
    if (entry.empty() || entry.back() != '\n' || entry.size() < 34 || entry[32] != ' ') {
      lines.clear();
      break;
    }
    entry.pop_back();
    lines.push_back(std::move(entry));
  }
  std::fclose(f);
  return lines;
}

// The XXH3-128 hash of a checkpoint's bytes (hex), remembered in the cache folder's index by
// the file's fingerprint: a later start whose file has the same fingerprint takes the hash
// from there instead of reading the whole file (gigabytes for a big model) at every start. A file
// changed less than 2 s before it was hashed is not remembered: timestamps come from a
// coarse clock, and a second write within the same tick would leave them as they were (git's
// "racily clean" case). Failing to read or write the index only costs the read. "" if the
// checkpoint cannot be read.
// `remembered_only`: "" instead of reading a file the index does not know. `expected`, when
// given: the file's state when it was loaded; "" if the file read differs from it (it changed
// since, and the hash would not name what was packed).
// `clock` says what "now" is for the 2 s.
std::string content_hash(const std::string& dir, const std::string& path, const PackedCacheClock& clock,
                         bool remembered_only = false, const struct stat* expected = nullptr) {
  char* resolved = ::realpath(path.c_str(), nullptr);
  const std::string real_path = resolved ? resolved : "";
  std::free(resolved);
  const bool rememberable = !real_path.empty() && real_path.find('\n') == std::string::npos;
  std::vector<std::string> index;
  struct stat now_st;
  if (rememberable && ::stat(path.c_str(), &now_st) == 0 && S_ISREG(now_st.st_mode) &&
      (!expected || same_file_state(now_st, *expected))) {
    index = read_hash_index(dir);
    const std::string wanted = fingerprint(now_st, real_path);
    for (const std::string& entry : index)
      if (entry.compare(33, std::string::npos, wanted) == 0) return entry.substr(0, 32);
  }
  if (remembered_only) return "";
  XXH3_state_t* state = XXH3_createState();
  if (!state) return "";
  XXH3_128bits_reset(state);
  struct stat before, after;
  const bool read = hash_file(path, state, &before, &after);
  const std::string digest = hex(XXH3_128bits_digest(state));
  XXH3_freeState(state);
  if (!read || (expected && (!same_file_state(before, *expected) || !same_file_state(before, after)))) return "";
  const int64_t now = clock.now_ns ? clock.now_ns() : system_clock_ns();
  const auto settled = [&](const struct timespec& t) {
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec < now - kSettledNs;
  };
  if (!rememberable || !same_file_state(before, after) || !settled(after.st_mtim) || !settled(after.st_ctim))
    return digest;
  // Rewritten whole under a temporary name, then renamed: readers see the old or the new index.
  const std::string entry = digest + " " + fingerprint(after, real_path), suffix = " " + real_path;
  std::vector<std::string> kept;
  for (const std::string& e : index)
    if (e.size() < suffix.size() || e.compare(e.size() - suffix.size(), suffix.size(), suffix) != 0) kept.push_back(e);
  kept.push_back(entry);
  if (kept.size() > kHashIndexEntries) kept.erase(kept.begin(), kept.end() - kHashIndexEntries);
  if (!make_dirs(dir)) return digest;
  const std::string target = dir + "/" + kHashIndex, temporary = target + "." + std::to_string(::getpid()) + ".tmp";
  std::FILE* f = std::fopen(temporary.c_str(), "we");
  if (!f) return digest;
  bool written = true;
  for (const std::string& e : kept) written = written && std::fprintf(f, "%s\n", e.c_str()) > 0;
  written = std::fclose(f) == 0 && written;
  if (!written || ::rename(temporary.c_str(), target.c_str()) != 0) ::unlink(temporary.c_str());
  return digest;
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

int64_t system_clock_ns() {
  struct timespec now;
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

PackedCacheEnvironment packed_cache_environment() {
  const char* value = std::getenv("ORDO_WEIGHT_CACHE");
  if (!value) return PackedCacheEnvironment::kDefault;
  const std::string v = value;
  if (v == "0" || v == "off" || v == "false" || v == "no") return PackedCacheEnvironment::kOff;
  return v == "always" ? PackedCacheEnvironment::kAlways : PackedCacheEnvironment::kDefault;
}

namespace {

// The cache file's name from the checkpoint's content hash (hex; "" gives "").
std::string cache_file_name(const std::string& dir, const std::string& checkpoint, const std::string& config_path,
                            nn::GemmType type) {
  XXH3_state_t* state = XXH3_createState();
  if (!state) return "";
  XXH3_128bits_reset(state);
  const bool read = !checkpoint.empty() && hash_file(config_path, state);
  nn::cap_onednn_isa();  // before the effective ISA is read (and fixed) below
  const dnnl_version_t* v = dnnl_version();
  const std::string context = std::string("ordo-packed format ") + std::to_string(io::kPackedWeightsFormat) + " type " +
                              compute_type_name(type) + " onednn " + std::to_string(v->major) + "." +
                              std::to_string(v->minor) + "." + std::to_string(v->patch) + " " + v->hash + " isa " +
                              std::to_string(static_cast<int>(dnnl_get_effective_cpu_isa())) + " md " +
                              std::to_string(sizeof(dnnl_memory_desc_t)) + " checkpoint " + checkpoint;
  XXH3_128bits_update(state, context.data(), context.size());
  const XXH128_hash_t digest = XXH3_128bits_digest(state);
  XXH3_freeState(state);
  if (!read) return "";
  return dir + "/" + hex(digest).substr(0, 32) + "-" + compute_type_name(type) + ".ordo-packed";
}

// Everything save_packed writes, collected from the model (which must outlive it: the packed
// weights are pointed to, not copied). False, the reason in `problem`, if the cache cannot hold it.
struct CollectedWeights {
  io::PackedWeights weights;
  std::vector<at::Tensor> keep;  // contiguous copies stay alive until written
};
bool collect_packed(Seq2SeqModel& model, nn::GemmType type, CollectedWeights* out, std::string* problem);

// Writes what collect_packed gathered to `path` (the folder made first). False, the reason in `why`.
bool write_collected(const std::string& path, const CollectedWeights& collected, std::string* why) {
  const auto fail = [&](const std::string& message) {
    if (why) *why = message;
    return false;
  };
  const size_t slash = path.rfind('/');
  if (slash != std::string::npos && !make_dirs(path.substr(0, slash)))
    return fail(path.substr(0, slash) + ": cannot create the cache folder (" + std::strerror(errno) + ")");
  try {
    io::write_packed_weights(path, collected.weights);
  } catch (const Error& e) {
    return fail(e.what());
  }
  return true;
}

std::mutex writers_mutex;
std::condition_variable writers_done;
int writers_running = 0;
// At exit(), a file still being written (its model never destroyed) is finished first; only
// _Exit or a kill leave it unwritten (its temporary file, never a partial cache file).
struct WaitAtExit {
  ~WaitAtExit() { wait_for_packed_cache_writes(); }
} wait_at_exit;

}  // namespace

std::string packed_cache_path(const std::string& dir, const std::string& checkpoint_path,
                              const std::string& config_path, nn::GemmType type, const PackedCacheClock& clock) {
  return cache_file_name(dir, content_hash(dir, checkpoint_path, clock), config_path, type);
}

std::string remembered_packed_cache_path(const std::string& dir, const std::string& checkpoint_path,
                                         const std::string& config_path, nn::GemmType type) {
  return cache_file_name(dir, content_hash(dir, checkpoint_path, PackedCacheClock{}, /*remembered_only=*/true),
                         config_path, type);
}

PackedCacheWriter::PackedCacheWriter(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(writers_mutex);
    ++writers_running;
  }
  thread_ = std::thread([work = std::move(work)]() mutable {
    // Behind the model's own threads: a translation started meanwhile comes first.
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid)), 10);
    try {
      work();
    } catch (...) {  // a failed write costs the cache file, never the process
    }
    work = nullptr;  // what it holds is released before the count says it is done
    std::lock_guard<std::mutex> lock(writers_mutex);
    --writers_running;
    writers_done.notify_all();
  });
}

PackedCacheWriter::~PackedCacheWriter() { wait(); }

void PackedCacheWriter::wait() {
  if (thread_.joinable()) thread_.join();
}

void wait_for_packed_cache_writes() {
  std::unique_lock<std::mutex> lock(writers_mutex);
  writers_done.wait(lock, [] { return writers_running == 0; });
}

std::unique_ptr<PackedCacheWriter> save_packed_in_background(
    const std::string& path, const std::string& dir, const std::string& checkpoint_path, const std::string& config_path,
    Seq2SeqModel& model, nn::GemmType type, std::function<void(const std::string&)> warn, PackedCacheClock clock) {
  // The checkpoint as it is now, just packed: if it has changed by the time it is hashed, the
  // hash would name other weights, and nothing is written. (A change while it was being packed
  // is not seen, as when the hash was read before packing.)
  struct stat loaded;
  if (::stat(checkpoint_path.c_str(), &loaded) != 0) return nullptr;
  auto collected = std::make_shared<CollectedWeights>();
  std::string problem;
  if (!collect_packed(model, type, collected.get(), &problem)) {
    if (warn) warn("weight cache not written: " + (path.empty() ? dir : path) + ": not written: " + problem);
    return nullptr;
  }
  return std::unique_ptr<PackedCacheWriter>(new PackedCacheWriter([=] {
    std::string target = path;  // given: it was looked up and missed or was refused: (re)written
    if (target.empty()) {
      target = cache_file_name(dir, content_hash(dir, checkpoint_path, clock, false, &loaded), config_path, type);
      if (target.empty()) return;  // unreadable, or changed since it was packed
      struct stat st;
      if (::lstat(target.c_str(), &st) == 0) return;  // not looked up, there already: the next start reads it
    }
    std::string why;
    if (!write_collected(target, *collected, &why) && warn) warn("weight cache not written: " + why);
  }));
}

namespace {

bool collect_packed(Seq2SeqModel& model, nn::GemmType type, CollectedWeights* out, std::string* problem_out) {
  io::PackedWeights& weights = out->weights;
  weights.compute_type = compute_type_name(type);
  std::string problem;  // a part the cache cannot hold
  std::vector<at::Tensor>& keep = out->keep;
  model.visit([&](const std::string& name, at::Tensor& param) {
    if (!param.defined()) {
      weights.absent.push_back(name);
      return;
    }
    const at::Tensor t = param.contiguous();
    if (t.scalar_type() != at::kFloat && t.scalar_type() != at::kBFloat16)
      problem = "tensor '" + name + "' is not float";
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
  if (problem_out) *problem_out = problem;
  return problem.empty();
}

}  // namespace

bool save_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why) {
  CollectedWeights collected;
  std::string problem;
  if (!collect_packed(model, type, &collected, &problem)) {
    if (why) *why = path + ": not written: " + problem;
    return false;
  }
  return write_collected(path, collected, why);
}

bool restore_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) return false;  // a plain miss
  try {
    // Checked there: size, checksum, ranges, byte counts, every float finite.
    // Read and scanned on the threads the model loads with.
    const io::PackedWeights file = io::read_packed_weights(path, compute_type_name(type), max_cache_bytes(model),
                                                           std::max(1, at::get_num_threads()));
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
      param = at::from_blob(
          const_cast<void*>(t.data), t.shape, [owner](void*) { (void)owner; },
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
