// ordo — the options, described once: a table each for DecodeOptions, ModelOptions and
// BatchOptions. An entry knows its option's name, flag, range and help, and sets, clears and
// prints its member itself. A face (a preset file, the command line, a request field, the C
// ABI, Python) only turns its input into an OptionValue and hands it to the entry, so that
// every face accepts the same values and says the same thing of a bad one. A new option is one
// member and one entry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ordo/error.h"
#include "ordo/export.h"
#include "ordo/options.h"
#include "ordo/preset.h"

namespace ordo {

// A value as a face read it, before an entry checks it. Numbers keep the kind their format
// gave them (a JSON or Python integer is int64_t, a fraction or an integer too large for
// int64_t is double); text is text. OptionSpec::set takes a whole double for an integer
// option, as JSON does not tell 4 from 4.0; OptionSpec::set_text reads a flag's or a form
// field's text by the option's type.
struct ORDO_API OptionValue {
  // std::monostate: a value of a kind no option takes (a JSON array or object), always refused.
  std::variant<std::monostate, bool, int64_t, double, std::string> value;

  OptionValue() = default;
  OptionValue(bool v) : value(v) {}
  template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  OptionValue(I v) : value(static_cast<int64_t>(v)) {}
  OptionValue(double v) : value(v) {}
  OptionValue(std::string v) : value(std::move(v)) {}
  OptionValue(const char* v) : value(std::string(v)) {}
};

// A JSON value (nlohmann::json, or any type with its is_* / get<> interface) as an OptionValue:
// what a preset file, a request body and a models file hold.
template <class Json>
OptionValue json_option_value(const Json& json) {
  if (json.is_boolean()) return json.template get<bool>();
  if (json.is_number_unsigned() && json.template get<uint64_t>() > static_cast<uint64_t>(INT64_MAX))
    return json.template get<double>();
  if (json.is_number_integer()) return json.template get<int64_t>();
  if (json.is_number_float()) return json.template get<double>();
  if (json.is_string()) return json.template get<std::string>();
  return {};
}

// A value an entry refused: the option's name and what it accepts. Faces word it their way
// ("field 'beam_size' must be ...", Python's TypeError for a value of the wrong type).
class ORDO_API OptionError : public Error {
 public:
  OptionError(const std::string& option, const std::string& must, const std::string& type, bool wrong_type);
  std::string option;  // "beam_size"
  std::string must;    // "must be an integer from 1 to 1024"
  std::string type;    // what the option takes: "an integer", "a number", "true or false", "a string"
  bool wrong_type;     // a text for a number, a fraction for an integer, ...
};

enum class OptionType { kInt, kFloat, kBool, kText, kChoice };

template <class Options>
struct ORDO_API OptionSpec {
  using OptionsType = Options;
  // Which server limit, if any, tightens `max` for a request (ordo serve's --max-beam,
  // --max-tokens).
  enum class Bound { kNone, kBeams, kTokens };

  const char* name;  // snake_case: the preset key, the request field, the member's name
  const char* flag;  // command-line flag(s), e.g. "-b,--beam-size"; "" = not a flag
  OptionType type;
  double min = 0, max = 0;  // kInt and kFloat: the accepted values, both ends included
  const char* help = "";
  bool in_preset = false;  // a preset file may set it
  Bound bound = Bound::kNone;
  int bound_offset = 0;  // max = min(max, server limit + bound_offset)
  // Requests that differ in it never share a batch (ordo serve). The source language does not
  // split: sentences are encoded, language token included, before they are queued.
  bool splits_batches = true;
  std::vector<std::string> choices;  // kChoice: the names it takes ("float32", "bfloat16", "int8")

  // Sets the option in `options`, or throws OptionError (nothing set). `max` below the
  // entry's own narrows the range (a server's limits).
  void set(Options& options, const OptionValue& value) const;
  void set(Options& options, const OptionValue& value, double max) const;
  // The same from text, read by the option's type: "4", "0.6", "true"/"false" (also "1"/"0").
  void set_text(Options& options, const std::string& text) const;
  // Back to unset (DecodeOptions: the model's default) or to the struct's default.
  void clear(Options& options) const;
  // The value `options` holds for it as text ("4", "0.6", "true", "de", "int8"); nullopt when
  // unset (DecodeOptions' optionals only).
  std::optional<std::string> text(const Options& options) const;
  // The value as a typed OptionValue (int64_t, double, bool, std::string; std::monostate when
  // unset), for faces that hand values on in a typed format (Python).
  OptionValue value(const Options& options) const;
  // "must be an integer from 1 to 1024" and the like, for error messages.
  std::string accepted() const;
  std::string accepted(double max) const;
  // "INT", "X", "true|false", "TEXT", "float32|bfloat16|int8": a flag's value in help texts.
  std::string metavar() const;

  struct Member;  // the field it reaches (the table's own file)
  std::shared_ptr<const Member> member;
};

extern template struct ORDO_API OptionSpec<DecodeOptions>;
extern template struct ORDO_API OptionSpec<ModelOptions>;
extern template struct ORDO_API OptionSpec<BatchOptions>;

using DecodeOptionSpec = OptionSpec<DecodeOptions>;
using ModelOptionSpec = OptionSpec<ModelOptions>;
using BatchOptionSpec = OptionSpec<BatchOptions>;

// Every option of each struct, in the order help texts list them.
ORDO_API const std::vector<DecodeOptionSpec>& decode_option_specs();
ORDO_API const std::vector<ModelOptionSpec>& model_option_specs();
ORDO_API const std::vector<BatchOptionSpec>& batch_option_specs();

// The entry named `name` ("temperature"), or nullptr.
ORDO_API const DecodeOptionSpec* find_decode_option(const std::string& name);
ORDO_API const ModelOptionSpec* find_model_option(const std::string& name);
ORDO_API const BatchOptionSpec* find_batch_option(const std::string& name);
// The entry named `name`; throws ordo::Error naming it and listing the table's names.
ORDO_API const DecodeOptionSpec& decode_option_spec(const std::string& name);
// The entry of a DecodeOptions member: faces name an option by its member (checked by the
// compiler), never by a second spelling of its name.
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<int> DecodeOptions::*member);
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<std::string> DecodeOptions::*member);
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<bool> DecodeOptions::*member);
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<float> DecodeOptions::*member);
ORDO_API const DecodeOptionSpec& decode_option_spec(std::optional<uint64_t> DecodeOptions::*member);

}  // namespace ordo
