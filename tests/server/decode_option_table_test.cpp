// The table of decoding options (ordo/decode_option_table.h) and the faces that read it: each
// entry sets its own DecodeOptions member through a request field and a preset file, refuses
// values outside its range naming the field, and the table is consistent with itself.
// ctest-label: unit
#include <cstdio>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ordo/decode_option_table.h"
#include "ordo/preset.h"
#include "server/request_fields.h"

namespace ordo {
namespace {

using Type = DecodeOptionSpec::Type;

// A value inside the spec's range, as JSON, and the text value_text() gives for it.
std::pair<nlohmann::json, std::string> sample_value(const DecodeOptionSpec& spec) {
  switch (spec.type) {
    case Type::kInt: {
      const int v = static_cast<int>(spec.min) + 1;
      return {v, std::to_string(v)};
    }
    case Type::kSeed: return {123456789, "123456789"};
    case Type::kFloat: return {spec.max / 2, ""};  // text checked through the member below
    case Type::kBool: return {true, "true"};
    case Type::kText: return {"de", "de"};
  }
  return {};
}

int members_set(const DecodeOptionSpec& spec) {
  return (spec.int_member != nullptr) + (spec.float_member != nullptr) + (spec.bool_member != nullptr) +
         (spec.seed_member != nullptr) + (spec.text_member != nullptr);
}

TEST(DecodeOptionTable, EachEntryHasOneMemberOfItsTypeAndUniqueNamesAndFlags) {
  std::set<std::string> names, flags;
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(members_set(spec), 1);
    EXPECT_TRUE(spec.type != Type::kInt || spec.int_member);
    EXPECT_TRUE(spec.type != Type::kFloat || spec.float_member);
    EXPECT_TRUE(spec.type != Type::kBool || spec.bool_member);
    EXPECT_TRUE(spec.type != Type::kSeed || spec.seed_member);
    EXPECT_TRUE(spec.type != Type::kText || spec.text_member);
    EXPECT_TRUE(names.insert(spec.name).second) << "name twice";
    if (*spec.flag) EXPECT_TRUE(flags.insert(spec.flag).second) << "flag twice";
    EXPECT_LE(spec.min, spec.max);
    EXPECT_GT(std::string(spec.help).size(), 5u);
  }
  EXPECT_EQ(server::decode_option_names().size(), decode_option_specs().size() + 1);  // and "glossary"
}

TEST(DecodeOptionTable, EveryEntryReachesItsMemberThroughARequestField) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    SCOPED_TRACE(spec.name);
    const auto [value, text] = sample_value(spec);
    const nlohmann::json body = {{spec.name, value}};
    const DecodeOptions o = server::decode_options(server::RequestFields::from_json(body.dump()), 1024, 1 << 20);
    ASSERT_TRUE(spec.value_text(o).has_value());
    if (spec.type == Type::kFloat)
      EXPECT_FLOAT_EQ(*(o.*spec.float_member), static_cast<float>(value.get<double>()));
    else
      EXPECT_EQ(*spec.value_text(o), text);
    // Exactly this option is set: every other entry is unset.
    for (const DecodeOptionSpec& other : decode_option_specs())
      if (&other != &spec) EXPECT_FALSE(other.value_text(o).has_value()) << other.name;
  }
}

TEST(DecodeOptionTable, RequestValuesOutsideTheRangeAreRefusedNamingTheField) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (spec.type != Type::kInt && spec.type != Type::kFloat && spec.type != Type::kSeed) continue;
    SCOPED_TRACE(spec.name);
    const nlohmann::json below = {{spec.name, spec.min - 1}};
    try {
      server::decode_options(server::RequestFields::from_json(below.dump()), 1024, 1 << 20);
      ADD_FAILURE() << "accepted " << below.dump();
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(spec.name), std::string::npos) << e.what();
    }
  }
  // The server's own limits tighten the table's ranges.
  EXPECT_THROW(server::decode_options(server::RequestFields::from_json(R"({"beam_size": 9})"), 8, 100),
               std::exception);
  EXPECT_THROW(server::decode_options(server::RequestFields::from_json(R"({"max_length": 102})"), 8, 100),
               std::exception);
  EXPECT_NO_THROW(server::decode_options(server::RequestFields::from_json(R"({"max_length": 101})"), 8, 100));
}

std::string write_preset(const nlohmann::json& decoding) {
  const std::string path = ::testing::TempDir() + "ordo_preset_table_test.json";
  std::ofstream(path) << nlohmann::json{{"decoding", decoding}}.dump();
  return path;
}

TEST(DecodeOptionTable, PresetsReadEveryPresetEntryAndRefuseOutOfRange) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    SCOPED_TRACE(spec.name);
    const auto [value, text] = sample_value(spec);
    const std::string path = write_preset({{spec.name, value}});
    if (!spec.in_preset) {
      EXPECT_THROW(load_preset(path), Error);
      continue;
    }
    const DecodeOptions o = load_preset(path);
    ASSERT_TRUE(spec.value_text(o).has_value());
    if (spec.type == Type::kInt || spec.type == Type::kFloat || spec.type == Type::kSeed) {
      try {
        load_preset(write_preset({{spec.name, spec.max * 2 + 1}}));
        ADD_FAILURE() << "accepted a value above " << spec.max;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("'" + std::string(spec.name) + "'"), std::string::npos) << e.what();
      }
    }
  }
  std::remove((::testing::TempDir() + "ordo_preset_table_test.json").c_str());
}

}  // namespace
}  // namespace ordo
