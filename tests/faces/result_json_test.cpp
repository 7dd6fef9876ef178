// The attention weights as JSON text (faces/result_json.h), written straight from their
// floats for `ordo translate --json --attention` and /v1/translate: valid JSON, the
// [layer][head][target][source] shape, each weight read back as the very same float.
// ctest-label: unit
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "faces/result_json.h"

namespace ordo::faces {
namespace {

Attention attention_of(int64_t layers, int64_t heads, int64_t target, int64_t source,
                       const std::vector<float>& values) {
  Attention a;
  a.layers = layers;
  a.heads = heads;
  a.target_length = target;
  a.source_length = source;
  a.weights = values;
  return a;
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(AttentionJson, EachWeightReadsBackAsTheSameFloat) {
  const std::vector<float> values = {0.1f,      1.0f,          0.0f,
                                     1e-8f,     0.33333334f,   std::numeric_limits<float>::denorm_min(),
                                     0.999999f, 3.4028235e38f, 1.17549435e-38f,
                                     0.5f,      0.25f,         7.006492e-10f};
  std::string text;
  append_attention(text, attention_of(2, 3, 1, 2, values));
  const nlohmann::json parsed = nlohmann::json::parse(text);
  size_t k = 0;
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 3; ++h)
      for (int s = 0; s < 2; ++s, ++k)
        EXPECT_EQ(bits(static_cast<float>(parsed[l][h][0][s].get<double>())), bits(values[k])) << text;
}

TEST(AttentionJson, TheShapeIsLayersHeadsTargetSource) {
  std::vector<float> values(2 * 1 * 3 * 4);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  std::string text;
  append_attention(text, attention_of(2, 1, 3, 4, values));
  const nlohmann::json parsed = nlohmann::json::parse(text);
  ASSERT_EQ(parsed.size(), 2u);
  ASSERT_EQ(parsed[1].size(), 1u);
  ASSERT_EQ(parsed[1][0].size(), 3u);
  ASSERT_EQ(parsed[1][0][2].size(), 4u);
  EXPECT_EQ(parsed[1][0][2][3].get<double>(), 23.0);
  EXPECT_EQ(parsed[0][0][1][0].get<double>(), 4.0);
}

TEST(AttentionJson, ANonFiniteWeightIsWrittenAsNull) {
  std::string text;
  append_attention(text, attention_of(1, 1, 1, 2, {std::nanf(""), 0.5f}));
  EXPECT_EQ(text, "[[[[null,0.5]]]]");
}

TEST(AttentionJson, FieldsAreWrittenInTheOrderOfTheCalls) {
  std::string text;
  JsonObjectWriter out(text);
  out.field("b", 1);
  out.raw_field("a") += "[1,2]";
  out.field("c", "x\"y");
  out.close();
  EXPECT_EQ(text, "{\"b\":1,\"a\":[1,2],\"c\":\"x\\\"y\"}");
}

}  // namespace
}  // namespace ordo::faces
