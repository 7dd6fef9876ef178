// ordo — the decoding options, described once. Every face reads them from this table: the
// preset reader (configs/*.json), the command line's flags, `ordo serve`'s request fields and
// its batch key (requests that differ in an option never share a batch). A new option is one
// DecodeOptions member and one entry here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ordo/export.h"
#include "ordo/options.h"
#include "ordo/preset.h"

namespace ordo {

struct ORDO_API DecodeOptionSpec {
  enum class Type { kInt, kFloat, kBool, kSeed, kText };
  // Which server limit, if any, tightens `max` for a request (ordo serve's --max-beam,
  // --max-tokens).
  enum class Bound { kNone, kBeams, kTokens };

  const char* name;  // snake_case: the preset key, the request field, the DecodeOptions member
  const char* flag;  // command-line flag(s), e.g. "-b,--beam-size"; "" = not a flag
  Type type;
  double min, max;   // accepted values (kInt, kFloat, kSeed), both ends included
  const char* help;
  bool in_preset;    // a preset file may set it
  Bound bound = Bound::kNone;
  int bound_offset = 0;  // max = min(max, server limit + bound_offset)
  // Requests that differ in it never share a batch (ordo serve). The source language does not
  // split: sentences are encoded, language token included, before they are queued.
  bool splits_batches = true;

  // The member it sets: the one matching `type`.
  std::optional<int> DecodeOptions::*int_member = nullptr;
  std::optional<float> DecodeOptions::*float_member = nullptr;
  std::optional<bool> DecodeOptions::*bool_member = nullptr;
  std::optional<uint64_t> DecodeOptions::*seed_member = nullptr;
  std::optional<std::string> DecodeOptions::*text_member = nullptr;

  // The value `options` holds for it as text ("4", "0.6", "true", "de"), or nullopt when unset.
  std::optional<std::string> value_text(const DecodeOptions& options) const;
  // "must be an integer from 1 to 1024" and the like, for error messages.
  std::string accepted() const;
};

// Every decoding option, in the order help texts list them.
ORDO_API const std::vector<DecodeOptionSpec>& decode_option_specs();
// The entry named `name` ("temperature"); throws ordo::Error for a name the table lacks.
ORDO_API const DecodeOptionSpec& decode_option_spec(const std::string& name);
// The entry of a DecodeOptions member: faces name an option by its member (checked by the
// compiler), never by a second spelling of its name.
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<int> DecodeOptions::*member);
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<std::string> DecodeOptions::*member);
// The integer `settings` (Translator::resolved_settings) resolved for `member`'s option, e.g.
// the beam size or max_length a call runs with; nullopt when the resolution does not list it.
ORDO_API std::optional<int64_t> resolved_int(const std::vector<ResolvedSetting>& settings,
                                             std::optional<int> DecodeOptions::*member);

}  // namespace ordo
