// A cache of packed weights on disk, for start-up. Packing a big model for a compute type
// (int8 quantization, oneDNN's blocked layouts) costs every load a pass over all weights
// (CPU seconds for a big model, more in float32);
// CTranslate2 avoids it by converting once, ahead of time. ordo does the
// conversion itself on the first load and keeps the result, so a user never runs a converter.
//
// Keyed by content, never by name or date: the file's name is a hash of the checkpoint's bytes,
// config.json's, the compute type, the oneDNN version and the CPU features it chose layouts
// for, and ordo's cache format. A changed checkpoint therefore misses (stale files are never
// read). Reading a checkpoint of gigabytes for its hash at every start would cost a good part
// of what the cache saves, so the hash is remembered in the cache folder (file `checkpoint-hashes`) under the checkpoint's stat()
// fingerprint: device, inode, size, modification and status-change times in ns, resolved
// path. Any of them different and the file is read and hashed again; a write changes mtime
// and ctime (ctime cannot be set back), a replaced file has another inode, and a file written
// less than 2 s before it was hashed is not remembered (a coarse clock tick could hide a second
// write). So the name still follows the content. (Whoever can write the cache folder could
// plant a wrong hash there as well as a wrong file under the right name: the folder is the
// user's own.) A file found under that name is still not trusted: its format (io/packed_weights_file.h)
// is an io::VerifiedFile (a regular file, the size its preamble says, an XXH3 checksum written
// last), every part must lie inside it with the bytes its shape needs, every packed
// layout is checked against the one oneDNN would choose now, and every float in it (weights,
// scales, biases) must be finite, as a checkpoint's must. Anything that does not pass is
// reported through PackedCacheOptions::warn, packed afresh from the checkpoint and the file
// rewritten (under a temporary name, then renamed).
//
// A hit reads the file into memory the process owns instead of mapping it. A mapping would
// be shared between processes and cost no copy, but a file shrinking under it (another
// process, a full disk, a user's `truncate`) kills the process with SIGBUS, and nothing checked
// at load can prevent that later (a lock is advisory; a private mapping's untouched pages are
// still the file's). The read runs on the loading threads, each faulting in and reading a
// consecutive share, hashed as it comes (the checksum needs every byte anyway), and the floats
// are scanned on them too. Most of a hit's time is faulting in those fresh anonymous pages,
// which CTranslate2 pays as well when it reads its model into memory (docs/benchmarks.md,
// "Memory and start-up").
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "models/seq2seq_model.h"
#include "nn/packed_gemm.h"

namespace ordo::models {

struct PackedCacheOptions {
  bool enabled = true;
  std::string dir;                          // "" = default_packed_cache_dir()
  int64_t min_checkpoint_bytes = 64 << 20;  // smaller checkpoints load in well under a second
  // Told, in one line naming the file, why a cache file was not used (damaged, truncated, not
  // a regular file, NaN inside) or could not be written; loading goes on without it. With
  // write_in_background, "not written" is told from the writer's thread, after load returned.
  std::function<void(const std::string&)> warn;
  // A miss packs the model and returns it at once; the cache file is written by a thread of its
  // own (PackedCacheWriter, owned by the model: its destructor waits for the file), so neither
  // the write (1-2.4 GB in float32) nor, on a checkpoint the hash index does not know yet,
  // the read of the whole checkpoint for its hash delays the first translation. The file
  // appears complete or not at all (written under a temporary name, then renamed): a process
  // killed meanwhile, or another one loading meanwhile, never reads part of it. With an
  // unknown checkpoint the cache is not looked up (its name needs the hash): the model is
  // packed, and a file found under the name once hashed is left as it is for the next start.
  bool write_in_background = false;
};

// The thread writing one cache file after a load (PackedCacheOptions::write_in_background);
// destroying it waits for the file to be complete (or given up).
class PackedCacheWriter {
 public:
  explicit PackedCacheWriter(std::function<void()> work);
  ~PackedCacheWriter();
  PackedCacheWriter(const PackedCacheWriter&) = delete;
  PackedCacheWriter& operator=(const PackedCacheWriter&) = delete;
  void wait();

 private:
  std::thread thread_;
};

// Waits until every cache file being written in this process is complete (or given up).
void wait_for_packed_cache_writes();

// $ORDO_CACHE_DIR, else $XDG_CACHE_HOME/ordo, else $HOME/.cache/ordo ("" if none is set).
std::string default_packed_cache_dir();

// ORDO_WEIGHT_CACHE: 0 / off / false / no turn the cache off, "always" caches checkpoints of
// any size (small models on slow disks, tests); unset or anything else: the options decide.
enum class PackedCacheEnvironment { kDefault, kOff, kAlways };
PackedCacheEnvironment packed_cache_environment();

// The wall clock a checkpoint's timestamps are compared with when its hash is about to be
// remembered (a file written less than 2 s before it was hashed is not). A plain struct so
// that a test can age a file by moving its own clock on instead of waiting; everyone else
// leaves it as it is, the system's real-time clock.
int64_t system_clock_ns();  // CLOCK_REALTIME, ns since the epoch
struct PackedCacheClock {
  std::function<int64_t()> now_ns = system_clock_ns;
};

// The cache file for a checkpoint (its bytes hashed) and config packed for `type`.
std::string packed_cache_path(const std::string& dir, const std::string& checkpoint_path,
                              const std::string& config_path, nn::GemmType type, const PackedCacheClock& clock = {});

// The same from the cache folder's hash index only: "" when the index does not remember the
// checkpoint as it is now (nothing is read but the index).
std::string remembered_packed_cache_path(const std::string& dir, const std::string& checkpoint_path,
                                         const std::string& config_path, nn::GemmType type);

// Writes the packed `model` to `path` (temporary name, then rename). False, with nothing left
// behind and the reason in `why`, when it cannot (no space, no permission, a part the cache
// cannot hold).
bool save_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why = nullptr);

// save_packed on a thread of its own: what is written is gathered from `model` here, the file
// written there; `path` "" = named there from the checkpoint's hash (read then), and not
// written if the checkpoint changed since it was packed or a file of that name exists. The
// model must outlive the writer (Seq2SeqModel owns it). nullptr, told to `warn`, when the
// model has a part the cache cannot hold.
std::unique_ptr<PackedCacheWriter> save_packed_in_background(
    const std::string& path, const std::string& dir, const std::string& checkpoint_path, const std::string& config_path,
    Seq2SeqModel& model, nn::GemmType type, std::function<void(const std::string&)> warn, PackedCacheClock clock = {});

// Fills a freshly constructed (unloaded) `model` from the cache file. False when the file is
// missing (`why` left empty: an ordinary miss) or fails any check above (`why` says which,
// naming the file): `model` must then be discarded.
bool restore_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type, std::string* why = nullptr);

}  // namespace ordo::models
