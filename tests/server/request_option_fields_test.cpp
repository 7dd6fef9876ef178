// `ordo serve`'s request fields read every option of the table of decoding options by its
// name, as the table reads a value, within the server's own limits, and name the field in
// every refusal.
// ctest-label: unit
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ordo/option_table.h"
#include "server/request_fields.h"
#include "support/option_samples.h"

namespace ordo {
namespace {

using testing::sample_value;

// ---------------------------------------------------------------- request fields

DecodeOptions from_request(const nlohmann::json& body, int max_beam = 1024, int max_tokens = 1 << 20) {
  return server::decode_options(server::RequestFields::from_json(body.dump()), max_beam, max_tokens);
}

TEST(DecodeOptionRequestFields, EveryEntryReachesItsMemberThroughARequestField) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    const auto [value, text] = sample_value(spec);
    EXPECT_EQ(spec.text(from_request({{spec.name, value}})), text) << spec.name;
  }
  EXPECT_EQ(server::decode_option_names().size(), decode_option_specs().size() + 1);  // and "glossary"
}

TEST(DecodeOptionRequestFields, AFormFieldIsReadByTheOptionsType) {
  const DecodeOptions o =
      server::decode_options(server::RequestFields::from_urlencoded("beam_size=3&top_p=0.5&sample=1"), 1024, 100);
  EXPECT_EQ(o.beam_size, 3);
  EXPECT_FLOAT_EQ(*o.top_p, 0.5f);
  EXPECT_EQ(o.sample, true);
}

TEST(DecodeOptionRequestFields, ValuesBelowTheRangeAreRefusedNamingTheField) {
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (spec.type != OptionType::kInt && spec.type != OptionType::kFloat) continue;
    try {
      from_request({{spec.name, spec.min - 1}});
      ADD_FAILURE() << "accepted " << spec.min - 1 << " for " << spec.name;
    } catch (const server::ApiError& e) {
      EXPECT_EQ(e.status, 400);
      EXPECT_NE(std::string(e.what()).find("field '" + std::string(spec.name) + "' must be"), std::string::npos)
          << e.what();
    }
  }
}

TEST(DecodeOptionRequestFields, TheSeedIsHeldToTheTablesMaximum) {
  EXPECT_EQ(from_request(nlohmann::json::parse(R"({"seed": 9223372036854775807})")).seed, 9223372036854775807ull);
  EXPECT_THROW(from_request(nlohmann::json::parse(R"({"seed": 9223372036854775808})")), server::ApiError);
}

TEST(DecodeOptionRequestFields, TheServersLimitsTightenTheTablesRanges) {
  EXPECT_THROW(from_request({{"beam_size", 9}}, 8, 100), server::ApiError);
  EXPECT_THROW(from_request({{"max_length", 102}}, 8, 100), server::ApiError);
  EXPECT_NO_THROW(from_request({{"max_length", 101}}, 8, 100));
}

}  // namespace
}  // namespace ordo
