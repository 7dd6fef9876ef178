// config.json / generation_config.json parsing: fixture values and every malformed case.
// ctest-label: unit
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "io/json_file.h"
#include "io/model_config.h"
#include "ordo/error.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo::io {
namespace {

using ordo::testing::TempDir;

nlohmann::json fixture_config(const std::string& name) {
  return read_json_file(ordo::testing::fixture_dir(name) + "/config.json");
}

std::string config_error(const nlohmann::json& config) {
  TempDir dir;
  const std::string path = dir.write("config.json", config.dump(2));
  try {
    load_model_config(path);
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    return message;
  }
  return "<no error>";
}

TEST(ModelConfig, ReadsMarianFixtures) {
  const ModelConfig c = load_model_config(ordo::testing::fixture_dir("marian_opus_en_mg") + "/config.json");
  const nlohmann::json raw = fixture_config("marian_opus_en_mg");
  EXPECT_EQ(c.model_type, "marian");
  EXPECT_EQ(c.d_model, raw["d_model"].get<int64_t>());
  EXPECT_EQ(c.vocab_size, raw["vocab_size"].get<int64_t>());
  EXPECT_EQ(c.decoder_vocab_size, c.vocab_size);
  EXPECT_EQ(c.activation_function, "swish");
  EXPECT_EQ(c.pad_token_id, raw["pad_token_id"].get<int64_t>());
  EXPECT_EQ(c.decoder_start_token_id, raw["decoder_start_token_id"].get<int64_t>());
  EXPECT_TRUE(c.scale_embedding);
  EXPECT_FALSE(c.normalize_before);

  const ModelConfig sep = load_model_config(ordo::testing::fixture_dir("marian_sep_en_mg") + "/config.json");
  EXPECT_FALSE(sep.share_encoder_decoder_embeddings);
  EXPECT_EQ(sep.decoder_vocab_size, fixture_config("marian_sep_en_mg")["decoder_vocab_size"].get<int64_t>());
}

TEST(ModelConfig, MissingFileSaysWhatIsExpected) {
  try {
    load_model_config("/nonexistent/config.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/config.json: cannot open"), std::string::npos);
  }
}

TEST(ModelConfig, InvalidJsonGivesLineAndColumn) {
  TempDir dir;
  const std::string path = dir.write("config.json", "{\n  \"d_model\": 16,\n  \"vocab_size\": ,\n}");
  try {
    load_model_config(path);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(path + ":3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("invalid JSON"), std::string::npos) << e.what();
  }
}

// Found by fuzzing (tests/fuzz/regressions/model_config/): a number beyond double's range made
// nlohmann throw out_of_range.406, which escaped as an "internal error" instead of ordo::Error.
TEST(ModelConfig, NumberOverflowIsInvalidJsonNamingTheFile) {
  TempDir dir;
  for (const std::string& name : {"config.json", "generation_config.json", "vocab.json"}) {
    const std::string path = dir.write(name, "{\"d_model\": 1E400, \"num_beams\": -8E9999}");
    try {
      read_json_file(path);
      FAIL() << name;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": invalid JSON: number overflow"), std::string::npos) << e.what();
    }
  }
  const std::string config = dir.write("config.json", "{\"d_model\": 1E400}");
  EXPECT_THROW(load_model_config(config), Error);
  EXPECT_THROW(load_generation_config(config), Error);
}

// Found by fuzzing (tests/fuzz/regressions/model_config/d_model_float_beyond_int64): an integer
// too long for uint64 parses as a double, and converting 1.6e93 to int64 was undefined
// behaviour (UBSan); an unsigned above INT64_MAX wrapped to a negative value.
TEST(ModelConfig, IntegersBeyondInt64AreOutOfRangeNotWrapped) {
  TempDir dir;
  for (const std::string& value : {"1555555555555555555555555555555555555555556", "1.6e93", "-9.3e18",
                                   "18446744073709551615", "9223372036854775808"}) {
    const std::string path = dir.write("config.json", "{\"d_model\": " + value + "}");
    const nlohmann::json json = read_json_file(path);
    try {
      JsonFields(json, path).required_int("d_model");
      FAIL() << value;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": field 'd_model' is out of range"), std::string::npos) << e.what();
    }
    EXPECT_THROW(load_model_config(path), Error) << value;
  }
  const std::string path =
      dir.write("config.json", "{\"a\": 9223372036854775807, \"b\": -9223372036854775808, \"c\": 4.0}");
  const nlohmann::json json = read_json_file(path);
  EXPECT_EQ(JsonFields(json, path).required_int("a"), INT64_MAX);
  EXPECT_EQ(JsonFields(json, path).required_int("b"), INT64_MIN);
  EXPECT_EQ(JsonFields(json, path).required_int("c"), 4);
}

TEST(ModelConfig, MissingAndWrongFieldsNameTheField) {
  nlohmann::json base = fixture_config("marian_opus_en_mg");
  auto without = [&](const char* key) {
    nlohmann::json c = base;
    c.erase(key);
    return c;
  };
  auto with = [&](const char* key, nlohmann::json value) {
    nlohmann::json c = base;
    c[key] = std::move(value);
    return c;
  };
  EXPECT_NE(config_error(without("d_model")).find("field 'd_model' is missing"), std::string::npos);
  EXPECT_NE(config_error(without("eos_token_id")).find("field 'eos_token_id' is missing"), std::string::npos);
  EXPECT_NE(config_error(with("d_model", "sixteen")).find("field 'd_model' must be an integer"), std::string::npos);
  EXPECT_NE(config_error(with("d_model", -16)).find("field 'd_model' is -16, outside the accepted range [1, 65536]"),
            std::string::npos);
  EXPECT_NE(config_error(with("decoder_layers", 100000)).find("field 'decoder_layers' is 100000, outside"),
            std::string::npos);
  EXPECT_NE(config_error(with("encoder_attention_heads", 3)).find("must divide d_model"), std::string::npos);
  EXPECT_NE(config_error(with("scale_embedding", "yes")).find("field 'scale_embedding' must be true or false"),
            std::string::npos);
  EXPECT_NE(config_error(with("pad_token_id", 10000000)).find("field 'pad_token_id' is 10000000, outside"),
            std::string::npos);
  EXPECT_NE(config_error(with("bad_words_ids", nlohmann::json::array({1, 2}))).find("field 'bad_words_ids'"),
            std::string::npos);
  EXPECT_NE(config_error(with("decoder_vocab_size", 7)).find("field 'decoder_vocab_size'"), std::string::npos);
  EXPECT_NE(config_error(nlohmann::json::array()).find("expected a JSON object"), std::string::npos);
}

TEST(ModelConfig, PegasusStartsFromPadWhenStartIdIsAbsent) {
  nlohmann::json c = fixture_config("marian_opus_en_mg");
  c["model_type"] = "pegasus";
  c.erase("decoder_start_token_id");
  TempDir dir;
  const ModelConfig parsed = load_model_config(dir.write("config.json", c.dump()));
  EXPECT_EQ(parsed.decoder_start_token_id, parsed.pad_token_id);
}

TEST(GenerationConfig, ReadsTheFixturesValues) {
  const nlohmann::json raw =
      read_json_file(ordo::testing::fixture_dir("marian_tcbig_en_pt") + "/generation_config.json");
  const GenerationConfig g =
      load_generation_config(ordo::testing::fixture_dir("marian_tcbig_en_pt") + "/generation_config.json");
  if (raw.contains("num_beams")) EXPECT_EQ(g.num_beams, raw["num_beams"].get<int64_t>());
  if (raw.contains("renormalize_logits")) EXPECT_EQ(g.renormalize_logits, raw["renormalize_logits"].get<bool>());
  if (raw.contains("bad_words_ids")) EXPECT_TRUE(g.bad_words_ids.has_value());
}

TEST(GenerationConfig, AMissingFileSetsNothing) {
  const GenerationConfig none = load_generation_config("/nonexistent/generation_config.json");
  EXPECT_FALSE(none.num_beams.has_value());
  EXPECT_FALSE(none.max_length.has_value());
}

TEST(GenerationConfig, RejectsBadValues) {
  TempDir dir;
  for (const auto& [text, field] :
       std::vector<std::pair<std::string, std::string>>{{R"({"num_beams": 0})", "num_beams"},
                                                        {R"({"length_penalty": "long"})", "length_penalty"},
                                                        {R"({"max_length": -1})", "max_length"},
                                                        {R"({"early_stopping": "sometimes"})", "early_stopping"},
                                                        {R"({"bad_words_ids": [[1, -2]]})", "bad_words_ids"}}) {
    const std::string path = dir.write("generation_config.json", text);
    try {
      load_generation_config(path);
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": field '" + field + "'"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace ordo::io

namespace ordo::io {
namespace {

// The config.json / generation_config.json of real opus-mt models (tests/data/tokenizers/).
TEST(ModelConfig, ReadsRealOpusMtConfigs) {
  const std::string dir = ordo::testing::data_dir() + "/tokenizers/";
  const ModelConfig big = load_model_config(dir + "opus-mt-tc-big-en-pt/config.json");
  EXPECT_EQ(big.model_type, "marian");
  EXPECT_EQ(big.d_model, 1024);
  EXPECT_EQ(big.activation_function, "relu");
  EXPECT_EQ(big.vocab_size, 54776);
  const GenerationConfig g = load_generation_config(dir + "opus-mt-tc-big-en-pt/generation_config.json");
  EXPECT_EQ(g.num_beams, 4);
  const ModelConfig mg = load_model_config(dir + "opus-mt-en-mg/config.json");
  EXPECT_EQ(mg.activation_function, "swish");
  EXPECT_EQ(mg.decoder_start_token_id, mg.pad_token_id);
}

}  // namespace
}  // namespace ordo::io

namespace ordo::io {
namespace {

// FSMT: src_vocab_size / tgt_vocab_size, tie_word_embeddings = shared source/target embeddings
// (default false), the output projection always the decoder embedding, and FSMTConfig's
// defaults for the keys a config.json leaves out (the WMT19 configs rely on them).
TEST(ModelConfigFsmt, ReadsItsOwnVocabularySizeNames) {
  const ModelConfig c = load_model_config(ordo::testing::fixture_dir("fsmt") + "/config.json");
  EXPECT_EQ(c.model_type, "fsmt");
  EXPECT_EQ(c.vocab_size, 2449);
  EXPECT_EQ(c.decoder_vocab_size, 1590);
  EXPECT_EQ(c.vocab_size_key, "src_vocab_size");
  EXPECT_FALSE(c.share_encoder_decoder_embeddings);
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_EQ(c.decoder_start_token_id, 2);
}

// A config.json of FSMT's sizes only, with forced_eos_token_id null (None, as in HF).
const char* const kSparseFsmtConfig = R"({"model_type": "fsmt", "src_vocab_size": 100,
    "tgt_vocab_size": 90, "d_model": 32, "encoder_layers": 1, "decoder_layers": 1,
    "encoder_attention_heads": 2, "decoder_attention_heads": 2, "encoder_ffn_dim": 8,
    "decoder_ffn_dim": 8, "forced_eos_token_id": null})";

TEST(ModelConfigFsmt, WhatTheFileLeavesOutIsFsmtConfigsDefault) {
  TempDir dir;
  const ModelConfig d = load_model_config(dir.write("config.json", kSparseFsmtConfig));
  EXPECT_EQ(d.pad_token_id, 1);
  EXPECT_EQ(d.eos_token_id, 2);
  EXPECT_EQ(d.decoder_start_token_id, 2);
  EXPECT_EQ(d.max_position_embeddings, 1024);
  EXPECT_EQ(d.activation_function, "relu");
  EXPECT_TRUE(d.scale_embedding);
  EXPECT_FALSE(d.forced_eos_token_id.has_value());  // null in the file means None, as in HF
}

TEST(ModelConfigFsmt, GenerationDefaultsComeFromTheModelConfig) {
  TempDir dir;
  const GenerationConfig g = generation_config_from_model_config(dir.write("config.json", kSparseFsmtConfig));
  EXPECT_EQ(g.num_beams, 5);
  EXPECT_EQ(g.max_length, 200);
  EXPECT_EQ(g.decoder_start_token_id, 2);
  EXPECT_EQ(g.early_stopping, false);
}

TEST(ModelConfigFsmt, SharedEmbeddingsOfUnequalVocabulariesAreRefusedNamingFsmtsKeys) {
  nlohmann::json shared = nlohmann::json::parse(kSparseFsmtConfig);
  shared["tie_word_embeddings"] = true;
  const std::string message = config_error(shared);
  EXPECT_NE(message.find("'tgt_vocab_size'"), std::string::npos) << message;
  EXPECT_NE(message.find("tie_word_embeddings"), std::string::npos) << message;
}

TEST(ModelConfigFsmt, OtherFamiliesKeepTheirOwnVocabularySizeName) {
  nlohmann::json marian = fixture_config("marian_opus_en_mg");
  marian.erase("vocab_size");
  EXPECT_NE(config_error(marian).find("'vocab_size'"), std::string::npos);
}

// T5: its own names for the sizes (num_layers, num_heads, d_ff, d_kv), feed_forward_proj,
// relative position buckets, T5Config's defaults for what a config.json leaves out, and errors
// naming T5's fields.
TEST(ModelConfigT5, ReadsAGatedV11Config) {
  const ModelConfig v11 = load_model_config(ordo::testing::fixture_dir("t5") + "/config.json");
  EXPECT_EQ(v11.encoder_layers, 2);
  EXPECT_EQ(v11.decoder_layers, 2);
  EXPECT_EQ(v11.encoder_attention_heads, 4);
  EXPECT_EQ(v11.encoder_ffn_dim, 64);
  EXPECT_EQ(v11.head_dim, 6);  // 4 x 6 = 24, d_model 32
  EXPECT_TRUE(v11.gated_activation);
  EXPECT_EQ(v11.activation_function, "gelu_new");
  EXPECT_FALSE(v11.tie_word_embeddings);
  EXPECT_EQ(v11.relative_attention_num_buckets, 32);
  EXPECT_EQ(v11.relative_attention_max_distance, 128);
  EXPECT_DOUBLE_EQ(v11.layer_norm_epsilon, 1e-6);
}

TEST(ModelConfigT5, ReadsAV1ConfigAsReluAndTied) {
  const ModelConfig v1 = load_model_config(ordo::testing::fixture_dir("t5_v1") + "/config.json");
  EXPECT_FALSE(v1.gated_activation);
  EXPECT_EQ(v1.activation_function, "relu");
  EXPECT_TRUE(v1.tie_word_embeddings);
}

// A config.json with little but the type: T5Config's defaults (t5-base-like), decoder layers
// = num_layers, decoding from pad 0.
TEST(ModelConfigT5, WhatTheFileLeavesOutIsT5ConfigsDefault) {
  TempDir dir;
  const ModelConfig d = load_model_config(dir.write("config.json", R"({"model_type": "t5", "num_layers": 3})"));
  EXPECT_EQ(d.d_model, 512);
  EXPECT_EQ(d.decoder_layers, 3);
  EXPECT_EQ(d.encoder_attention_heads, 8);
  EXPECT_EQ(d.head_dim, 64);
  EXPECT_EQ(d.encoder_ffn_dim, 2048);
  EXPECT_EQ(d.vocab_size, 32128);
  EXPECT_EQ(d.max_position_embeddings, 512);  // n_positions
  EXPECT_EQ(d.activation_function, "relu");
  EXPECT_FALSE(d.gated_activation);
  EXPECT_EQ(d.pad_token_id, 0);
  EXPECT_EQ(d.eos_token_id, 1);
  EXPECT_EQ(d.decoder_start_token_id, 0);
}

TEST(ModelConfigT5, FieldsAreKnownByT5sOwnNames) {
  TempDir dir;
  const ModelConfig d = load_model_config(dir.write("config.json", R"({"model_type": "t5", "num_layers": 3})"));
  EXPECT_EQ(config_key(d, "encoder_layers"), "num_layers");
  EXPECT_EQ(config_key(d, "decoder_ffn_dim"), "d_ff");
}

TEST(ModelConfigT5, GatedSiluIsGatedWithSilu) {
  TempDir dir;
  const ModelConfig silu =
      load_model_config(dir.write("config.json", R"({"model_type": "t5", "feed_forward_proj": "gated-silu"})"));
  EXPECT_TRUE(silu.gated_activation);
  EXPECT_EQ(silu.activation_function, "silu");
}

TEST(ModelConfigT5, Mt5DefaultsToGatedGeluUntied) {
  TempDir dir;
  const ModelConfig mt5 = load_model_config(dir.write("config.json", R"({"model_type": "mt5"})"));
  EXPECT_TRUE(mt5.gated_activation);
  EXPECT_EQ(mt5.activation_function, "gelu_new");
  EXPECT_FALSE(mt5.tie_word_embeddings);
  EXPECT_EQ(mt5.vocab_size, 250112);
}

TEST(ModelConfigT5, AMalformedFeedForwardProjIsNamed) {
  for (const char* proj : {"gated-gelu-new", "relu-gated", "gated-", ""}) {
    nlohmann::json bad = fixture_config("t5");
    bad["feed_forward_proj"] = proj;
    bad.erase("dense_act_fn");
    bad.erase("is_gated_act");
    const std::string message = config_error(bad);
    EXPECT_NE(message.find("'feed_forward_proj'"), std::string::npos) << proj << ": " << message;
  }
}

// Errors name config.json's own T5 fields.
TEST(ModelConfigT5, AnOutOfRangeSizeIsNamedByItsT5Field) {
  const auto error_with = [](const char* key, const nlohmann::json& value) {
    nlohmann::json bad = fixture_config("t5");
    bad[key] = value;
    return config_error(bad);
  };
  EXPECT_NE(error_with("d_kv", 0).find("'d_kv'"), std::string::npos);
  EXPECT_NE(error_with("num_heads", -1).find("'num_heads'"), std::string::npos);
  EXPECT_NE(error_with("num_decoder_layers", 0).find("'num_decoder_layers'"), std::string::npos);
  EXPECT_NE(error_with("relative_attention_num_buckets", 2).find("'relative_attention_num_buckets'"),
            std::string::npos);
  // max_distance must exceed num_buckets / 2 (the buckets' logarithm divides by ln(max_distance / max_exact)).
  EXPECT_NE(error_with("relative_attention_max_distance", 16).find("'relative_attention_max_distance'"),
            std::string::npos);
  EXPECT_NE(error_with("layer_norm_epsilon", 0).find("'layer_norm_epsilon'"), std::string::npos);
  EXPECT_NE(error_with("d_ff", "wide").find("'d_ff'"), std::string::npos);
}

// T5's feed_forward_proj read as T5Config.__init__ (transformers 4.31) reads it, and the
// fields beside it that must agree with it.
nlohmann::json t5_config_with(const char* key, const nlohmann::json& value) {
  nlohmann::json config = fixture_config("t5");
  config.erase("dense_act_fn");
  config.erase("is_gated_act");
  config[key] = value;
  return config;
}

TEST(ModelConfigT5, AnUnknownFeedForwardProjIsRefused) {
  for (const char* proj : {"gated-foo", "foo", "gelu-new", "", "gated-"}) {
    const std::string message = config_error(t5_config_with("feed_forward_proj", proj));
    EXPECT_NE(message.find("field 'feed_forward_proj'"), std::string::npos) << proj << ": " << message;
  }
  const std::string unknown = config_error(t5_config_with("feed_forward_proj", "gated-foo"));
  EXPECT_NE(unknown.find("'foo' is not an activation function of transformers"), std::string::npos) << unknown;
}

TEST(ModelConfigT5, AFeedForwardProjOfAnotherFormatIsRefusedAsTransformersRefusesIt) {
  for (const char* proj : {"gated-gelu-new", "relu-gated", "gated--gelu", "-relu"}) {
    const std::string message = config_error(t5_config_with("feed_forward_proj", proj));
    EXPECT_NE(message.find("field 'feed_forward_proj' is '" + std::string(proj) +
                           "', not a valid activation function of the dense layer"),
              std::string::npos)
        << proj << ": " << message;
  }
}

TEST(ModelConfigT5, ADenseActFnThatContradictsFeedForwardProjIsRefused) {
  nlohmann::json config = t5_config_with("feed_forward_proj", "gated-gelu");
  config["dense_act_fn"] = "relu";
  const std::string message = config_error(config);
  EXPECT_NE(message.find("field 'dense_act_fn' is 'relu', but feed_forward_proj 'gated-gelu' implies 'gelu_new'"),
            std::string::npos)
      << message;
}

TEST(ModelConfigT5, AnIsGatedActThatContradictsFeedForwardProjIsRefused) {
  nlohmann::json config = t5_config_with("feed_forward_proj", "relu");
  config["is_gated_act"] = true;
  const std::string message = config_error(config);
  EXPECT_NE(message.find("field 'is_gated_act' is true, but feed_forward_proj 'relu' implies false"), std::string::npos)
      << message;
}

TEST(ModelConfigT5, AZeroOrNegativeNPositionsIsRefused) {
  for (const int n : {0, -1}) {
    const std::string message = config_error(t5_config_with("n_positions", n));
    EXPECT_NE(message.find("field 'n_positions' is " + std::to_string(n) + ", outside the accepted range"),
              std::string::npos)
        << message;
  }
}

}  // namespace
}  // namespace ordo::io
