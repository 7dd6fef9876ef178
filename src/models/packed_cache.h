// A cache of packed weights on disk, for start-up. Packing a big model for a compute type
// (int8 quantization, oneDNN's reorder into its blocked layouts) takes seconds every time
// the model is loaded; CTranslate2 avoids it by converting once, ahead of time. ordo does the
// conversion itself on the first load and keeps the result, so a user never runs a converter:
// later loads map the file and use its packed weights where they lie (read-only, shared
// between processes, no copy).
//
// Keyed by content, never by name or date: the file's name is a hash of the checkpoint's bytes,
// config.json's, the compute type, the oneDNN version and the CPU features it chose layouts
// for, and ordo's cache format. A changed checkpoint therefore misses (stale files are never
// read); a truncated or foreign file is refused by its size and header, and every packed
// layout is checked against the one oneDNN would choose now. Anything that does not match is
// packed afresh and the file rewritten (written under a temporary name, then renamed).
#pragma once

#include <cstdint>
#include <string>

#include "models/seq2seq_model.h"
#include "nn/packed_gemm.h"

namespace ordo::models {

struct PackedCacheOptions {
  bool enabled = true;
  std::string dir;                      // "" = default_packed_cache_dir()
  int64_t min_checkpoint_bytes = 64 << 20;  // smaller checkpoints load in well under a second
};

// $ORDO_CACHE_DIR, else $XDG_CACHE_HOME/ordo, else $HOME/.cache/ordo ("" if none is set).
std::string default_packed_cache_dir();
// Whether the environment turns the cache off (ORDO_WEIGHT_CACHE=0).
bool packed_cache_disabled_by_environment();

// The cache file for a checkpoint (its bytes hashed) and config packed for `type`.
std::string packed_cache_path(const std::string& dir, const std::string& checkpoint_path,
                              const std::string& config_path, nn::GemmType type);

// Writes the packed `model` to `path` (temporary name, then rename). False, with nothing left
// behind, when it cannot (no space, no permission, a part the cache cannot hold).
bool save_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type);

// Fills a freshly constructed (unloaded) `model` from the cache file. False when the file is
// missing, truncated, not for this model/type/CPU, or any part does not fit: `model` must
// then be discarded.
bool restore_packed(const std::string& path, Seq2SeqModel& model, nn::GemmType type);

}  // namespace ordo::models
