// The tables of options (include/ordo/option_table.h): the one place their names, flags,
// ranges and help texts are written, and the one place a value is checked against its
// option's type and range and stored in its member.
#include "ordo/option_table.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ordo {

// ---------------------------------------------------------------- members

// A checked value, ready to store: what OptionSpec::set made of an OptionValue.
using Checked = std::variant<bool, int64_t, double, std::string>;

template <class Options>
struct OptionSpec<Options>::Member {
  virtual ~Member() = default;
  virtual void store(Options& options, const Checked& value) const = 0;
  virtual void clear(Options& options) const = 0;
  virtual std::optional<std::string> text(const Options& options) const = 0;
  virtual OptionValue value(const Options& options) const = 0;
};

namespace {

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) >= 1e15)  // the seed's 2^63 - 1, not 9.22337204e+18
    return v >= 9.2e18 ? "9223372036854775807" : std::to_string(static_cast<int64_t>(v));
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  std::string text = buffer;
  if (text.find('e') != std::string::npos && std::fabs(v) < 1) {  // 0.000001, not 1e-06
    std::snprintf(buffer, sizeof buffer, "%.12f", v);
    text = buffer;
    while (text.back() == '0') text.pop_back();
  }
  return text;
}

// The stored forms of a checked value, one per field type the option structs use.
void assign(std::optional<int>& field, const Checked& v) { field = static_cast<int>(std::get<int64_t>(v)); }
void assign(std::optional<uint64_t>& field, const Checked& v) { field = static_cast<uint64_t>(std::get<int64_t>(v)); }
void assign(std::optional<float>& field, const Checked& v) { field = static_cast<float>(std::get<double>(v)); }
void assign(std::optional<bool>& field, const Checked& v) { field = std::get<bool>(v); }
void assign(std::optional<std::string>& field, const Checked& v) { field = std::get<std::string>(v); }
void assign(int& field, const Checked& v) { field = static_cast<int>(std::get<int64_t>(v)); }
void assign(bool& field, const Checked& v) { field = std::get<bool>(v); }
void assign(ComputeType& field, const Checked& v) { field = parse_compute_type(std::get<std::string>(v)); }

std::string shown(int v) { return std::to_string(v); }
std::string shown(uint64_t v) { return std::to_string(v); }
std::string shown(float v) { return number_text(v); }
std::string shown(bool v) { return v ? "true" : "false"; }
std::string shown(const std::string& v) { return v; }
std::string shown(ComputeType v) { return compute_type_name(v); }

OptionValue typed(int v) { return v; }
OptionValue typed(uint64_t v) { return static_cast<int64_t>(v); }
OptionValue typed(float v) { return static_cast<double>(v); }
OptionValue typed(bool v) { return v; }
OptionValue typed(const std::string& v) { return v; }
OptionValue typed(ComputeType v) { return compute_type_name(v); }

template <class T>
OptionValue typed_if_set(const std::optional<T>& v) {
  if (v) return typed(*v);
  return {};
}
template <class T>
OptionValue typed_if_set(const T& v) {
  return typed(v);
}

template <class T>
std::optional<std::string> shown_if_set(const std::optional<T>& v) {
  if (v) return shown(*v);
  return std::nullopt;
}
template <class T>
std::optional<std::string> shown_if_set(const T& v) {
  return shown(v);
}

template <class Options, class Field>
struct FieldMember final : OptionSpec<Options>::Member {
  explicit FieldMember(Field Options::*f) : field(f) {}
  Field Options::*field;

  void store(Options& options, const Checked& value) const override { assign(options.*field, value); }
  void clear(Options& options) const override {
    static const Options defaults;
    options.*field = defaults.*field;  // an optional's default is unset
  }
  std::optional<std::string> text(const Options& options) const override { return shown_if_set(options.*field); }
  OptionValue value(const Options& options) const override { return typed_if_set(options.*field); }
};

// ---------------------------------------------------------------- entries

template <class Options, class Field>
OptionSpec<Options> entry(const char* name, const char* flag, OptionType type, double min, double max, const char* help,
                          Field Options::*field) {
  OptionSpec<Options> s;
  s.name = name;
  s.flag = flag;
  s.type = type;
  s.min = min;
  s.max = max;
  s.help = help;
  s.member = std::make_shared<FieldMember<Options, Field>>(field);
  return s;
}

using Decode = DecodeOptionSpec;
using Bound = Decode::Bound;

constexpr double kMaxTokens = 1 << 20;
constexpr double kMaxBeams = 1024;
constexpr double kMaxSeed = 9223372036854775807.0;  // JSON's integers are int64

template <class Field>
Decode decode(const char* name, const char* flag, OptionType type, double min, double max, const char* help,
              Field DecodeOptions::*field, Bound bound = Bound::kNone, int bound_offset = 0) {
  Decode s = entry(name, flag, type, min, max, help, field);
  s.in_preset = type != OptionType::kText;  // no text option is a preset's
  s.bound = bound;
  s.bound_offset = bound_offset;
  return s;
}

template <class Field>
Decode decode_flag(const char* name, const char* flag, const char* help, Field DecodeOptions::*field) {
  return decode(name, flag, OptionType::kBool, 0, 1, help, field);
}

Decode not_in_preset(Decode s) {
  s.in_preset = false;
  return s;
}

Decode not_splitting_batches(Decode s) {
  s.splits_batches = false;
  return s;
}

// A text that is `type`'s: a whole number, a number, true/false (or 1/0).
std::optional<int64_t> whole_number(const std::string& text) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> number(const std::string& text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || end != text.data() + text.size()) return std::nullopt;
  if (error == std::errc::result_out_of_range) return std::numeric_limits<double>::infinity();
  if (error != std::errc()) return std::nullopt;
  return value;
}

bool all_digits(const std::string& text) {
  size_t i = !text.empty() && (text[0] == '-' || text[0] == '+');
  if (i == text.size()) return false;
  for (; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

}  // namespace

// ---------------------------------------------------------------- the tables

const std::vector<DecodeOptionSpec>& decode_option_specs() {
  using T = OptionType;
  static const std::vector<DecodeOptionSpec> specs = {
      decode("beam_size", "-b,--beam-size", T::kInt, 1, kMaxBeams, "Beam width; 1 = greedy", &DecodeOptions::beam_size,
             Bound::kBeams),
      decode("n_best", "-n,--n-best", T::kInt, 1, kMaxBeams,
             "Hypotheses per input (<= beam size); printed as 'index ||| text ||| score'", &DecodeOptions::n_best,
             Bound::kBeams),
      decode("max_new_tokens", "--max-length", T::kInt, 1, kMaxTokens,
             "Generate at most N tokens (like Hugging Face max_new_tokens)", &DecodeOptions::max_new_tokens,
             Bound::kTokens),
      decode("max_length", "", T::kInt, 2, kMaxTokens + 1,
             "Hugging Face max_length: the whole target length, the decoder start token included",
             &DecodeOptions::max_length, Bound::kTokens, 1),
      decode("min_length", "", T::kInt, 0, kMaxTokens + 1,
             "Hugging Face min_length: the whole target length, the decoder start token included",
             &DecodeOptions::min_length, Bound::kTokens, 1),
      decode("min_new_tokens", "--min-length", T::kInt, 0, kMaxTokens,
             "Generate at least N tokens before the end token", &DecodeOptions::min_new_tokens, Bound::kTokens),
      decode("length_penalty", "--length-penalty", T::kFloat, -100, 100, "Beam score = log-prob sum / length^P",
             &DecodeOptions::length_penalty),
      decode_flag("early_stopping", "--early-stopping",
                  "Beam search stops once n-best hypotheses are finished (true/false)", &DecodeOptions::early_stopping),
      decode("no_repeat_ngram_size", "--no-repeat-ngram-size", T::kInt, 0, 1024, "Never repeat an n-gram of this size",
             &DecodeOptions::no_repeat_ngram_size),
      decode("repetition_penalty", "--repetition-penalty", T::kFloat, 0.01, 100,
             "Penalize generated tokens (1.0 = off)", &DecodeOptions::repetition_penalty),
      decode_flag("sample", "--sample", "Sample instead of searching (true/false)", &DecodeOptions::sample),
      decode("temperature", "--temperature", T::kFloat, 1e-3, 100, "Sampling temperature", &DecodeOptions::temperature),
      decode("top_k", "--top-k", T::kInt, 0, 1 << 20, "Sample among the k most likely tokens (0 = all)",
             &DecodeOptions::top_k),
      decode("top_p", "--top-p", T::kFloat, 1e-6, 1, "Sample from the smallest set with probability >= p",
             &DecodeOptions::top_p),
      decode("seed", "--seed", T::kInt, 0, kMaxSeed, "Random seed for sampling (same seed, same output)",
             &DecodeOptions::seed),
      decode("force_words", "--force-words", T::kText, 0, 0,
             "Target phrases each output must contain, separated by '|' (constrained beam search; beam size >= 2)",
             &DecodeOptions::force_words),
      not_splitting_batches(
          decode("source_lang", "--source-lang", T::kText, 0, 0,
                 "Source language of multilingual models (M2M100: en; NLLB: eng_Latn; mBART-50: en_XX)",
                 &DecodeOptions::source_lang)),
      decode("target_lang", "--target-lang", T::kText, 0, 0,
             "Target language of multilingual models (M2M100: de; NLLB: deu_Latn; mBART-50: de_DE)",
             &DecodeOptions::target_lang),
      decode("task", "--task", T::kText, 0, 0,
             "A task of the model's config.json task_specific_params (T5: summarization, translation_en_to_de):\n"
             "its prefix before each input, its decoding settings over generation_config.json",
             &DecodeOptions::task),
      decode("global_attention", "--global-attention", T::kText, 0, 0,
             "LED: source positions with global attention: first (default), none, or token positions and\n"
             "ranges such as 0,4-7",
             &DecodeOptions::global_attention),
      decode("target_prefix", "", T::kText, 0, 0,
             "Target text each translation starts with and continues (kept in the output)",
             &DecodeOptions::target_prefix),
      not_in_preset(decode_flag("return_alternatives", "--return-alternatives",
                                "The n-best next words after the target prefix, each continued greedily (true/false)",
                                &DecodeOptions::return_alternatives)),
      not_in_preset(decode_flag("use_vmap", "--use-vmap",
                                "Vocabulary shortlist from the model folder's vmap.txt: faster, not exact (true/false)",
                                &DecodeOptions::use_vmap)),
  };
  return specs;
}

const std::vector<ModelOptionSpec>& model_option_specs() {
  static const std::vector<ModelOptionSpec> specs = [] {
    using T = OptionType;
    ModelOptionSpec compute = entry("compute_type", "--compute-type", T::kChoice, 0, 0,
                                    "Arithmetic of the matrix products: float32 (exact, default), bfloat16 or int8 "
                                    "(faster)",
                                    &ModelOptions::compute_type);
    compute.choices = compute_type_names();
    return std::vector<ModelOptionSpec>{
        entry("threads", "-t,--threads", T::kInt, 0, 1024, "CPU threads (default: all cores)", &ModelOptions::threads),
        entry("inter_threads", "--inter-threads", T::kInt, 1, ModelOptions::kMaxInterThreads,
              "Batches translated at once, sharing --threads (2 on 2 cores: best throughput)",
              &ModelOptions::inter_threads),
        compute,
        entry("weight_cache", "", T::kBool, 0, 1,
              "Keep packed weights in a cache file for faster loads (--no-weight-cache: pack afresh)",
              &ModelOptions::weight_cache),
    };
  }();
  return specs;
}

const std::vector<BatchOptionSpec>& batch_option_specs() {
  using T = OptionType;
  static const std::vector<BatchOptionSpec> specs = {
      entry("batch_size", "--batch-size", T::kInt, 1, 1 << 16,
            "Inputs decoded together (the output does not depend on it)", &BatchOptions::batch_size),
      entry("batch_tokens", "--batch-tokens", T::kInt, 0, 1 << 24,
            "Cap a batch at N source tokens, padding included (0 = no cap)", &BatchOptions::batch_tokens),
  };
  return specs;
}

namespace {

template <class Spec>
const Spec* find(const std::vector<Spec>& specs, const std::string& name) {
  for (const Spec& spec : specs)
    if (name == spec.name) return &spec;
  return nullptr;
}

template <class Field>
const DecodeOptionSpec& spec_of(Field DecodeOptions::*field) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (const auto* m = dynamic_cast<const FieldMember<DecodeOptions, Field>*>(spec.member.get()))
      if (m->field == field) return spec;
  throw Error("internal error: a DecodeOptions member missing from the table of decoding options");
}

}  // namespace

const DecodeOptionSpec* find_decode_option(const std::string& name) { return find(decode_option_specs(), name); }
const ModelOptionSpec* find_model_option(const std::string& name) { return find(model_option_specs(), name); }
const BatchOptionSpec* find_batch_option(const std::string& name) { return find(batch_option_specs(), name); }

const DecodeOptionSpec& decode_option_spec(const std::string& name) {
  if (const DecodeOptionSpec* spec = find_decode_option(name)) return *spec;
  std::string known;
  for (const DecodeOptionSpec& spec : decode_option_specs())
    known += std::string(known.empty() ? "" : ", ") + spec.name;
  throw Error("no decoding option named '" + name + "' (known: " + known + ")");
}

const DecodeOptionSpec& decode_option_spec(std::optional<int> DecodeOptions::*member) { return spec_of(member); }
const DecodeOptionSpec& decode_option_spec(std::optional<std::string> DecodeOptions::*member) {
  return spec_of(member);
}
const DecodeOptionSpec& decode_option_spec(std::optional<bool> DecodeOptions::*member) { return spec_of(member); }
const DecodeOptionSpec& decode_option_spec(std::optional<float> DecodeOptions::*member) { return spec_of(member); }
const DecodeOptionSpec& decode_option_spec(std::optional<uint64_t> DecodeOptions::*member) { return spec_of(member); }

// ---------------------------------------------------------------- an entry's work

OptionError::OptionError(const std::string& option, const std::string& must, const std::string& type, bool wrong_type)
    : Error(option + " " + must), option(option), must(must), type(type), wrong_type(wrong_type) {}

template <class Options>
std::string OptionSpec<Options>::accepted(double most) const {
  switch (type) {
    case OptionType::kInt: return "must be an integer from " + number_text(min) + " to " + number_text(most);
    case OptionType::kFloat: return "must be a number from " + number_text(min) + " to " + number_text(most);
    case OptionType::kBool: return "must be true or false";
    case OptionType::kText: return "must be a string";
    case OptionType::kChoice: {
      std::string names;
      for (const std::string& c : choices) names += (names.empty() ? "" : ", ") + c;
      return "must be one of " + names;
    }
  }
  return "";
}

template <class Options>
std::string OptionSpec<Options>::accepted() const {
  return accepted(max);
}

template <class Options>
std::string OptionSpec<Options>::metavar() const {
  switch (type) {
    case OptionType::kInt: return "INT";
    case OptionType::kFloat: return "FLOAT";
    case OptionType::kBool: return "BOOLEAN";
    case OptionType::kText: return "TEXT";
    case OptionType::kChoice: {
      std::string names;
      for (const std::string& c : choices) names += (names.empty() ? "" : "|") + c;
      return names;
    }
  }
  return "";
}

template <class Options>
void OptionSpec<Options>::set(Options& options, const OptionValue& given, double most) const {
  static const char* const kTypes[] = {"an integer", "a number", "true or false", "a string", "a string"};
  const std::string kind = kTypes[static_cast<int>(type)];
  const auto refuse = [&](bool wrong_type) { return OptionError(name, accepted(most), kind, wrong_type); };
  const auto in_range = [&](double v) { return v >= min && v <= most; };
  const Checked checked = std::visit(
      [&](const auto& v) -> Checked {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) throw refuse(true);
        switch (type) {
          case OptionType::kInt:
            if constexpr (std::is_same_v<V, int64_t>) {
              if (!in_range(static_cast<double>(v))) throw refuse(false);
              return v;
            } else if constexpr (std::is_same_v<V, double>) {
              if (std::isfinite(v) && std::floor(v) != v) throw refuse(true);
              if (!std::isfinite(v) || !in_range(v) || std::fabs(v) >= 9.2e18) throw refuse(false);
              return static_cast<int64_t>(v);
            }
            throw refuse(true);
          case OptionType::kFloat:
            if constexpr (std::is_same_v<V, int64_t> || std::is_same_v<V, double>) {
              const double d = static_cast<double>(v);
              if (!std::isfinite(d) || !in_range(d)) throw refuse(false);
              return d;
            }
            throw refuse(true);
          case OptionType::kBool:
            if constexpr (std::is_same_v<V, bool>) return v;
            throw refuse(true);
          case OptionType::kText:
            if constexpr (std::is_same_v<V, std::string>) return v;
            throw refuse(true);
          case OptionType::kChoice:
            if constexpr (std::is_same_v<V, std::string>) {
              for (const std::string& c : choices)
                if (v == c) return v;
              throw refuse(false);
            }
            throw refuse(true);
        }
        throw refuse(true);
      },
      given.value);
  member->store(options, checked);
}

template <class Options>
void OptionSpec<Options>::set(Options& options, const OptionValue& value) const {
  set(options, value, max);
}

template <class Options>
void OptionSpec<Options>::set_text(Options& options, const std::string& text) const {
  switch (type) {
    case OptionType::kInt:
      if (const auto v = whole_number(text)) return set(options, *v);
      // Digits too many for int64_t are out of range; anything else is not an integer.
      return set(options, all_digits(text) ? std::numeric_limits<double>::infinity() : 0.5);
    case OptionType::kFloat:
      if (const auto v = number(text)) return set(options, *v);
      return set(options, text);  // refused: not a number
    case OptionType::kBool:
      if (text == "true" || text == "1") return set(options, true);
      if (text == "false" || text == "0") return set(options, false);
      return set(options, text);  // refused: not true or false
    case OptionType::kText:
    case OptionType::kChoice: return set(options, text);
  }
}

template <class Options>
OptionValue OptionSpec<Options>::value(const Options& options) const {
  return member->value(options);
}

template <class Options>
void OptionSpec<Options>::clear(Options& options) const {
  member->clear(options);
}

template <class Options>
std::optional<std::string> OptionSpec<Options>::text(const Options& options) const {
  return member->text(options);
}

template struct OptionSpec<DecodeOptions>;
template struct OptionSpec<ModelOptions>;
template struct OptionSpec<BatchOptions>;

}  // namespace ordo
