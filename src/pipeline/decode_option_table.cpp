// The table of decoding options (include/ordo/decode_option_table.h): the one place their
// names, flags, ranges and help texts are written.
#include "ordo/decode_option_table.h"

#include <cstdio>

namespace ordo {

namespace {

using Spec = DecodeOptionSpec;
using Type = Spec::Type;
using Bound = Spec::Bound;

constexpr double kMaxTokens = 1 << 20;

Spec int_option(const char* name, const char* flag, double min, double max, const char* help,
                std::optional<int> DecodeOptions::*member, Bound bound = Bound::kNone, int bound_offset = 0) {
  Spec s{name, flag, Type::kInt, min, max, help, true, bound, bound_offset};
  s.int_member = member;
  return s;
}

Spec float_option(const char* name, const char* flag, double min, double max, const char* help,
                  std::optional<float> DecodeOptions::*member) {
  Spec s{name, flag, Type::kFloat, min, max, help, true};
  s.float_member = member;
  return s;
}

Spec bool_option(const char* name, const char* flag, const char* help, std::optional<bool> DecodeOptions::*member) {
  Spec s{name, flag, Type::kBool, 0, 1, help, true};
  s.bool_member = member;
  return s;
}

Spec seed_option(const char* name, const char* flag, const char* help, std::optional<uint64_t> DecodeOptions::*member) {
  Spec s{name, flag, Type::kSeed, 0, 9223372036854775807.0, help, true};  // JSON's integers are int64
  s.seed_member = member;
  return s;
}

Spec text_option(const char* name, const char* flag, const char* help, std::optional<std::string> DecodeOptions::*member,
                 bool splits_batches = true) {
  Spec s{name, flag, Type::kText, 0, 0, help, false};
  s.text_member = member;
  s.splits_batches = splits_batches;
  return s;
}

std::string number_text(double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  return buffer;
}

}  // namespace

const std::vector<DecodeOptionSpec>& decode_option_specs() {
  static const std::vector<DecodeOptionSpec> specs = [] {
    return std::vector<DecodeOptionSpec>{
        int_option("beam_size", "-b,--beam-size", 1, 1024, "Beam width; 1 = greedy", &DecodeOptions::beam_size,
                   Bound::kBeams),
        int_option("n_best", "-n,--n-best", 1, 1024,
                   "Hypotheses per input (<= beam size); printed as 'index ||| text ||| score'",
                   &DecodeOptions::n_best, Bound::kBeams),
        int_option("max_new_tokens", "--max-length", 1, kMaxTokens,
                   "Generate at most N tokens (like Hugging Face max_new_tokens)", &DecodeOptions::max_new_tokens,
                   Bound::kTokens),
        int_option("max_length", "", 2, kMaxTokens + 1,
                   "Hugging Face max_length: the whole target length, the decoder start token included",
                   &DecodeOptions::max_length, Bound::kTokens, 1),
        int_option("min_length", "", 0, kMaxTokens + 1,
                   "Hugging Face min_length: the whole target length, the decoder start token included",
                   &DecodeOptions::min_length, Bound::kTokens, 1),
        int_option("min_new_tokens", "--min-length", 0, kMaxTokens, "Generate at least N tokens before the end token",
                   &DecodeOptions::min_new_tokens, Bound::kTokens),
        float_option("length_penalty", "--length-penalty", -100, 100, "Beam score = log-prob sum / length^P",
                     &DecodeOptions::length_penalty),
        bool_option("early_stopping", "--early-stopping",
                    "Beam search stops once n-best hypotheses are finished (true/false)",
                    &DecodeOptions::early_stopping),
        int_option("no_repeat_ngram_size", "--no-repeat-ngram-size", 0, 1024, "Never repeat an n-gram of this size",
                   &DecodeOptions::no_repeat_ngram_size),
        float_option("repetition_penalty", "--repetition-penalty", 0.01, 100, "Penalize generated tokens (1.0 = off)",
                     &DecodeOptions::repetition_penalty),
        bool_option("sample", "--sample", "Sample instead of searching (true/false)", &DecodeOptions::sample),
        float_option("temperature", "--temperature", 1e-3, 100, "Sampling temperature", &DecodeOptions::temperature),
        int_option("top_k", "--top-k", 0, 1 << 20, "Sample among the k most likely tokens (0 = all)",
                   &DecodeOptions::top_k),
        float_option("top_p", "--top-p", 1e-6, 1, "Sample from the smallest set with probability >= p",
                     &DecodeOptions::top_p),
        seed_option("seed", "--seed", "Random seed for sampling (same seed, same output)", &DecodeOptions::seed),
        text_option("force_words", "--force-words",
                    "Target phrases each output must contain, separated by '|' (constrained beam search; beam size >= 2)",
                    &DecodeOptions::force_words),
        text_option("source_lang", "--source-lang",
                    "Source language of multilingual models (M2M100: en; NLLB: eng_Latn; mBART-50: en_XX)",
                    &DecodeOptions::source_lang, false),
        text_option("target_lang", "--target-lang",
                    "Target language of multilingual models (M2M100: de; NLLB: deu_Latn; mBART-50: de_DE)",
                    &DecodeOptions::target_lang),
        text_option("task", "--task",
                    "A task of the model's config.json task_specific_params (T5: summarization, translation_en_to_de):\n"
                    "its prefix before each input, its decoding settings over generation_config.json",
                    &DecodeOptions::task),
        text_option("target_prefix", "",
                    "Target text each translation starts with and continues (kept in the output)",
                    &DecodeOptions::target_prefix),
        [] {
          Spec s = bool_option("return_alternatives", "--return-alternatives",
                               "The n-best next words after the target prefix, each continued greedily (true/false)",
                               &DecodeOptions::return_alternatives);
          s.in_preset = false;
          return s;
        }(),
        [] {
          Spec s = bool_option("use_vmap", "--use-vmap",
                               "Vocabulary shortlist from the model folder's vmap.txt: faster, not exact (true/false)",
                               &DecodeOptions::use_vmap);
          s.in_preset = false;
          return s;
        }(),
    };
  }();
  return specs;
}

const DecodeOptionSpec& decode_option_spec(const std::string& name) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (name == spec.name) return spec;
  throw Error("no decoding option named '" + name + "'");
}

const DecodeOptionSpec& decode_option_spec(std::optional<int> DecodeOptions::*member) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.type == DecodeOptionSpec::Type::kInt && spec.int_member == member) return spec;
  throw Error("internal error: a DecodeOptions member missing from the table of decoding options");
}

const DecodeOptionSpec& decode_option_spec(std::optional<std::string> DecodeOptions::*member) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (spec.type == DecodeOptionSpec::Type::kText && spec.text_member == member) return spec;
  throw Error("internal error: a DecodeOptions member missing from the table of decoding options");
}

std::optional<int64_t> resolved_int(const std::vector<ResolvedSetting>& settings,
                                    std::optional<int> DecodeOptions::*member) {
  const std::string name = decode_option_spec(member).name;
  for (const ResolvedSetting& s : settings)
    if (s.name == name) return std::stoll(s.value);
  return std::nullopt;
}

std::optional<std::string> DecodeOptionSpec::value_text(const DecodeOptions& o) const {
  switch (type) {
    case Type::kInt:
      if (const auto& v = o.*int_member) return std::to_string(*v);
      break;
    case Type::kFloat:
      if (const auto& v = o.*float_member) return number_text(*v);
      break;
    case Type::kBool:
      if (const auto& v = o.*bool_member) return *v ? "true" : "false";
      break;
    case Type::kSeed:
      if (const auto& v = o.*seed_member) return std::to_string(*v);
      break;
    case Type::kText:
      if (const auto& v = o.*text_member) return *v;
      break;
  }
  return std::nullopt;
}

std::string DecodeOptionSpec::accepted() const {
  switch (type) {
    case Type::kInt:
      return "must be an integer from " + number_text(min) + " to " + number_text(max);
    case Type::kSeed:
      return "must be an integer from 0 to 9223372036854775807";
    case Type::kFloat:
      return "must be a number from " + number_text(min) + " to " + number_text(max);
    case Type::kBool:
      return "must be true or false";
    case Type::kText:
      return "must be a string";
  }
  return "";
}

}  // namespace ordo
