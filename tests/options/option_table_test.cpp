// The tables of options (ordo/option_table.h): each entry sets its own member from a typed
// value and from text, refuses what its type and range do not take (naming the option), clears
// and prints it; presets are read through the tables; the tables are consistent with themselves.
// ctest-label: unit
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ordo/option_table.h"
#include "ordo/preset.h"
#include "support/option_samples.h"

namespace ordo {
namespace {

using testing::sample_value;

// Every entry of the three tables, as (name, flag).
std::vector<std::pair<std::string, std::string>> all_entries() {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& spec : decode_option_specs()) out.emplace_back(spec.name, spec.flag);
  for (const auto& spec : model_option_specs()) out.emplace_back(spec.name, spec.flag);
  for (const auto& spec : batch_option_specs()) out.emplace_back(spec.name, spec.flag);
  return out;
}

TEST(OptionTables, NoNameOrFlagIsTakenTwice) {
  std::set<std::string> names, flags;
  for (const auto& [name, flag] : all_entries()) {
    EXPECT_TRUE(names.insert(name).second) << name;
    if (!flag.empty()) EXPECT_TRUE(flags.insert(flag).second) << flag;
  }
}

TEST(OptionTables, EachEntryHasARangeInOrderAndAHelpText) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    EXPECT_LE(spec.min, spec.max) << spec.name;
    EXPECT_GT(std::string(spec.help).size(), 5u) << spec.name;
  }
}

TEST(OptionTables, EachDecodingEntrySetsOnlyItsOwnMember) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    DecodeOptions o;
    spec.set(o, json_option_value(sample_value(spec).first));
    EXPECT_EQ(spec.text(o), sample_value(spec).second) << spec.name;
    for (const DecodeOptionSpec& other : decode_option_specs())
      if (&other != &spec) EXPECT_FALSE(other.text(o).has_value()) << spec.name << " set " << other.name;
  }
}

TEST(OptionTables, ClearUnsetsADecodingOption) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    DecodeOptions o;
    spec.set_text(o, sample_value(spec).second);
    spec.clear(o);
    EXPECT_FALSE(spec.text(o).has_value()) << spec.name;
  }
}

TEST(OptionTables, TextAndValueReadBackWhatWasSet) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    DecodeOptions a, b;
    spec.set_text(a, sample_value(spec).second);
    spec.set(b, spec.value(a));
    EXPECT_EQ(spec.text(a), spec.text(b)) << spec.name;
  }
}

TEST(OptionTables, AnIntegerOptionRefusesAFractionAsTheWrongType) {
  DecodeOptions o;
  try {
    decode_option_spec(&DecodeOptions::beam_size).set(o, 2.5);
    FAIL() << "accepted 2.5";
  } catch (const OptionError& e) {
    EXPECT_TRUE(e.wrong_type);
    EXPECT_EQ(std::string(e.what()), "beam_size must be an integer from 1 to 1024");
  }
}

TEST(OptionTables, AnIntegerOptionTakesAWholeNumberGivenAsADouble) {
  DecodeOptions o;
  decode_option_spec(&DecodeOptions::beam_size).set(o, 4.0);
  EXPECT_EQ(o.beam_size, 4);
}

TEST(OptionTables, AValueOutOfRangeIsRefusedSayingTheRange) {
  DecodeOptions o;
  try {
    decode_option_spec(&DecodeOptions::top_p).set_text(o, "1.5");
    FAIL() << "accepted 1.5";
  } catch (const OptionError& e) {
    EXPECT_FALSE(e.wrong_type);
    EXPECT_EQ(e.option, "top_p");
    EXPECT_EQ(e.must, "must be a number from 0.000001 to 1");
  }
  EXPECT_FALSE(o.top_p.has_value());
}

TEST(OptionTables, TheSeedTakesTheWholeInt64RangeAndNoMore) {
  const DecodeOptionSpec& seed = decode_option_spec("seed");
  DecodeOptions o;
  seed.set_text(o, "9223372036854775807");
  EXPECT_EQ(o.seed, 9223372036854775807ull);
  EXPECT_THROW(seed.set_text(o, "9223372036854775808"), OptionError);
  EXPECT_THROW(seed.set_text(o, "-1"), OptionError);
  EXPECT_EQ(seed.accepted(), "must be an integer from 0 to 9223372036854775807");
}

TEST(OptionTables, ATighterMaximumNarrowsTheRange) {
  DecodeOptions o;
  EXPECT_THROW(decode_option_spec(&DecodeOptions::beam_size).set(o, 9, 8), OptionError);
  EXPECT_NO_THROW(decode_option_spec(&DecodeOptions::beam_size).set(o, 8, 8));
}

TEST(OptionTables, ABooleanReadsTrueFalseOneAndZeroOnly) {
  const DecodeOptionSpec& sample = decode_option_spec(&DecodeOptions::sample);
  DecodeOptions o;
  sample.set_text(o, "1");
  EXPECT_EQ(o.sample, true);
  sample.set_text(o, "false");
  EXPECT_EQ(o.sample, false);
  EXPECT_THROW(sample.set_text(o, "yes"), OptionError);
}

TEST(OptionTables, TheComputeTypeTakesTheLibrarysNamesOnly) {
  const ModelOptionSpec& compute = *find_model_option("compute_type");
  EXPECT_EQ(compute.choices, compute_type_names());
  ModelOptions o;
  compute.set_text(o, "int8");
  EXPECT_EQ(o.compute_type, ComputeType::kInt8);
  EXPECT_EQ(compute.text(o), "int8");
  EXPECT_THROW(compute.set_text(o, "float16"), OptionError);
}

TEST(OptionTables, ClearingAModelOptionRestoresItsDefault) {
  const ModelOptionSpec& threads = *find_model_option("threads");
  ModelOptions o;
  threads.set(o, 3);
  threads.clear(o);
  EXPECT_EQ(o.threads, ModelOptions{}.threads);
}

TEST(OptionTables, TheBatchSizeIsHeldToTheTablesRange) {
  const BatchOptionSpec& size = *find_batch_option("batch_size");
  BatchOptions o;
  EXPECT_THROW(size.set(o, 0), OptionError);
  EXPECT_THROW(size.set(o, (1 << 16) + 1), OptionError);
  size.set(o, 1 << 16);
  EXPECT_EQ(o.batch_size, 1 << 16);
}

TEST(OptionTables, AnUnknownNameIsAnErrorListingTheKnownOnes) {
  try {
    decode_option_spec("beam_sise");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no decoding option named 'beam_sise' (known: beam_size, n_best"),
              std::string::npos)
        << e.what();
  }
}

// ---------------------------------------------------------------- presets

std::string write_preset(const nlohmann::json& preset) {
  const std::string path = ::testing::TempDir() + "ordo_preset_table_test.json";
  std::ofstream(path) << preset.dump();
  return path;
}

TEST(DecodeOptionPresets, APresetSetsEachPresetEntry) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!spec.in_preset) continue;
    const auto [value, text] = sample_value(spec);
    EXPECT_EQ(spec.text(load_preset(write_preset({{"decoding", {{spec.name, value}}}}))), text) << spec.name;
  }
}

TEST(DecodeOptionPresets, APresetRefusesAnEntryThatIsNotAPresets) {
  for (const DecodeOptionSpec& spec : decode_option_specs())
    if (!spec.in_preset)
      EXPECT_THROW(load_preset(write_preset({{"decoding", {{spec.name, sample_value(spec).first}}}})), Error)
          << spec.name;
}

TEST(DecodeOptionPresets, APresetRefusesAValueAboveTheRangeNamingTheKey) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!spec.in_preset || (spec.type != OptionType::kInt && spec.type != OptionType::kFloat)) continue;
    try {
      load_preset(write_preset({{"decoding", {{spec.name, spec.max * 2 + 1}}}}));
      ADD_FAILURE() << "accepted a value above " << spec.max << " for " << spec.name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + std::string(spec.name) + "'"), std::string::npos) << e.what();
    }
  }
}

TEST(DecodeOptionPresets, APresetsBatchingIsReadThroughTheBatchTable) {
  std::vector<std::string> set;
  const BatchOptions o = load_preset_batching(
      write_preset({{"decoding", nlohmann::json::object()}, {"batching", {{"batch_size", 7}}}}), &set);
  EXPECT_EQ(o.batch_size, 7);
  EXPECT_EQ(set, std::vector<std::string>{"batch_size"});
  EXPECT_THROW(load_preset_batching(write_preset({{"batching", {{"batch_size", 0}}}})), Error);
}

}  // namespace
}  // namespace ordo
