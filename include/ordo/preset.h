// ordo — task presets: JSON files of decoding defaults (configs/translation.json,
// configs/summarization.json) that sit below a model's generation_config.json.
#pragma once

#include <string>
#include <vector>

#include "ordo/export.h"
#include "ordo/options.h"

namespace ordo {

// Reads a preset file: {"task": ..., "description": ..., "decoding": {"beam_size": 4, ...},
// "batching": {"batch_size": 32}} with the DecodeOptions / BatchOptions field names.
// load_preset reads "decoding", load_preset_batching "batching" (optional: BatchOptions'
// defaults; `set`, when given, receives the names the file sets). Each throws ordo::Error
// naming the file and field.
ORDO_API DecodeOptions load_preset(const std::string& json_path);
ORDO_API BatchOptions load_preset_batching(const std::string& json_path, std::vector<std::string>* set = nullptr);

// One resolved decoding setting and where its value came from: "option" (the caller),
// "generation_config.json" / "config.json" (the model), "preset", or "default" (HF's).
struct ResolvedSetting {
  std::string name;
  std::string value;
  std::string source;
};

}  // namespace ordo
