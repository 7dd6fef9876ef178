// The failure modes an independent probe found, case by case: malformed model
// folders, out-of-range ids and sizes, FIFOs, NaN weights, positions past the table, options a
// library caller can pass. Each now ends in an ordo::Error naming the file and the field (never
// a crash, a hang, a LibTorch trace or silent garbage), or is handled as Hugging Face does.
// ctest-label: integration
#include <ATen/Parallel.h>
#include <sched.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "ordo/ordo.h"
#include "support/errors.h"
#include "support/scratch_model.h"

namespace ordo {
namespace {

using testing::error_of;
using testing::ScratchModel;

const char* kMarian = "marian_opus_en_mg";

void expect_mentions(const std::string& error, const std::vector<std::string>& words) {
  ASSERT_FALSE(error.empty()) << "the folder loaded without an error";
  for (const std::string& word : words) EXPECT_NE(error.find(word), std::string::npos) << error;
}

// Writes NaN (or an infinity) into element `index` of `tensor`, in its own dtype.
void poison(io::TensorData& tensor, size_t index, bool infinity) {
  switch (tensor.dtype) {
    case io::DType::F32: {
      const float value = infinity ? std::numeric_limits<float>::infinity() : std::nanf("");
      std::memcpy(tensor.bytes.data() + 4 * index, &value, 4);
      break;
    }
    case io::DType::F16: {
      const uint16_t value = infinity ? 0x7c00 : 0x7e00;
      std::memcpy(tensor.bytes.data() + 2 * index, &value, 2);
      break;
    }
    case io::DType::BF16: {
      const uint16_t value = infinity ? 0x7f80 : 0x7fc0;
      std::memcpy(tensor.bytes.data() + 2 * index, &value, 2);
      break;
    }
    default: FAIL() << tensor.name << " is not a float tensor";
  }
}

TEST(HardeningConfig, HugeSizesAreRefusedNamingTheField) {
  // 2^56 + 1 positions used to overflow the table size and write past a tiny buffer.
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"max_position_embeddings", "72057594037927937"},
                                                        {"d_model", "4611686018427387904"},
                                                        {"vocab_size", "1000000000"},
                                                        {"encoder_ffn_dim", "1099511627776"},
                                                        {"decoder_layers", "100000"},
                                                        {"max_position_embeddings", "1048577"}}) {
    const ScratchModel model(kMarian, key);
    model.set_json("config.json", key, value);
    expect_mentions(model.load_error(), {"config.json", key});
  }
}

TEST(HardeningConfig, SizesBeyondTheCheckpointAreRefusedBeforeAllocation) {
  for (const auto& [key, value, tensor] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"vocab_size", "60000", "model.shared.weight"},
           {"d_model", "64", "model.shared.weight"},
           {"encoder_ffn_dim", "4096", "model.encoder.layers.1.fc1.weight"},
           {"decoder_layers", "7", "model.decoder.layers.6.fc1.weight"}}) {
    const ScratchModel model(kMarian, key);
    model.set_json("config.json", key, value);
    if (key == "vocab_size") model.set_json("config.json", "decoder_vocab_size", value);
    expect_mentions(model.load_error(), {"config.json", key, "model.safetensors", tensor});
  }
}

// A config.json asking for fewer layers than the checkpoint holds left the others
// out without a word (worse output, exit 0); zero layers translated into one repeated word.
TEST(HardeningConfig, LayersTheConfigDoesNotCountAreRefusedNamingThem) {
  for (const auto& [fixture, key, value, words] :
       std::vector<std::tuple<std::string, std::string, std::string, std::vector<std::string>>>{
           {kMarian, "encoder_layers", "1", {"model.encoder.layers.1.*", "encoder_layers=1", "2 encoder layers"}},
           {kMarian, "decoder_layers", "1", {"model.decoder.layers.1.*", "decoder_layers=1", "2 decoder layers"}},
           {"marian_sep_en_mg",
            "decoder_layers",
            "1",
            {"model.decoder.layers.1.* to model.decoder.layers.2.*", "decoder_layers=1", "3 decoder layers"}},
           {"pegasus", "encoder_layers", "1", {"model.encoder.layers.1.*", "encoder_layers=1"}}}) {
    const ScratchModel model(fixture, key + value);
    model.set_json("config.json", key, value);
    std::vector<std::string> expected = {"model.safetensors", "config.json"};
    expected.insert(expected.end(), words.begin(), words.end());
    expect_mentions(model.load_error(), expected);
  }
}

TEST(HardeningConfig, ZeroLayersAreRefused) {
  for (const std::string key : {"encoder_layers", "decoder_layers"}) {
    const ScratchModel model(kMarian, key);
    model.set_json("config.json", key, "0");
    expect_mentions(model.load_error(), {"config.json", "field '" + key + "' is 0"});
  }
}

TEST(HardeningGeneration, TokenIdsOutsideTheVocabularyAreRefused) {
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{{"eos_token_id", "99999"},
                                                                                   {"eos_token_id", "-3"},
                                                                                   {"forced_bos_token_id", "-1"},
                                                                                   {"pad_token_id", "1000000"},
                                                                                   {"decoder_start_token_id", "99999"},
                                                                                   {"forced_eos_token_id", "99999"},
                                                                                   {"bad_words_ids", "[[5, 99999]]"}}) {
    const ScratchModel model(kMarian, key);
    model.set_json("generation_config.json", key, value);
    expect_mentions(model.load_error(), {"generation_config.json", key});
  }
}

TEST(HardeningGeneration, OutOfRangeSettingsAreRefused) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"num_beams", "5000"},
                                                        {"num_beams", "1000000000"},
                                                        {"max_new_tokens", "9223372036854775807"},
                                                        {"max_length", "-1"},
                                                        {"num_return_sequences", "2000"},
                                                        {"temperature", "1e999"},
                                                        {"length_penalty", "-1e999"},
                                                        {"top_p", "7"},
                                                        {"repetition_penalty", "0"}}) {
    const ScratchModel model(kMarian, key + value);
    model.set_json("generation_config.json", key, value);
    // JSON cannot spell an infinity: 1e999 overflows the parser, whose message quotes the number.
    const bool overflow = value.find("e999") != std::string::npos;
    expect_mentions(model.load_error(), {"generation_config.json", overflow ? "1e999" : key});
  }
}

TEST(HardeningFiles, UnreadableGenerationConfigIsAnErrorNotIgnored) {
  const ScratchModel model(kMarian);
  model.make_directory("generation_config.json");
  expect_mentions(model.load_error(), {"generation_config.json", "directory"});
}

TEST(HardeningFiles, FifosAreRefusedInsteadOfBlocking) {
  for (const std::string file : {"config.json", "generation_config.json", "tokenizer_config.json", "vocab.json",
                                 "source.spm", "target.spm", "model.safetensors"}) {
    const ScratchModel model(kMarian, file);
    model.make_fifo(file);
    expect_mentions(model.load_error(), {file, "FIFO"});
  }
}

TEST(HardeningFiles, DirectoryAsSentencePieceModelIsAClearError) {
  const ScratchModel model(kMarian);
  model.make_directory("source.spm");
  const std::string error = model.load_error();
  expect_mentions(error, {"source.spm", "directory"});
  EXPECT_EQ(error.find("basic_filebuf"), std::string::npos) << error;
}

TEST(HardeningWeights, NanOrInfinityInAnyWeightIsNamed) {
  for (const auto& [name, infinity] :
       std::vector<std::pair<std::string, bool>>{{"model.shared.weight", false},
                                                 {"model.encoder.layers.0.self_attn.q_proj.weight", false},
                                                 {"model.decoder.layers.1.fc2.weight", true},
                                                 {"model.encoder.layers.0.final_layer_norm.weight", false},
                                                 {"final_logits_bias", true}}) {
    const ScratchModel model(kMarian, name);
    bool found = false;
    model.rewrite_weights([&, name = name, infinity = infinity](std::vector<io::TensorData>& tensors) {
      for (io::TensorData& t : tensors)
        if (t.name == name) {
          poison(t, 3, infinity);
          found = true;
        }
    });
    ASSERT_TRUE(found) << name;
    expect_mentions(model.load_error(), {"model.safetensors", name, infinity ? "infinity" : "NaN"});
  }
}

TEST(HardeningTokenizer, VocabularyIdsBeyondTheModelAreRefusedAtLoad) {
  const ScratchModel model(kMarian);
  nlohmann::json vocab = model.read_json("vocab.json");
  const int64_t vocab_size = model.read_json("config.json")["vocab_size"];
  vocab["\xe2\x96\x81zzzqqq"] = vocab_size + 5;
  model.write("vocab.json", vocab.dump());
  expect_mentions(model.load_error(), {"vocab.json", "vocab_size", std::to_string(vocab_size + 5)});
}

TEST(HardeningOptions, LibraryOptionsOutOfRangeAreOrdoErrors) {
  const Translator translator(testing::fixture_dir(kMarian));
  const auto with = [](auto set) {
    DecodeOptions o;
    o.max_new_tokens = 5;
    set(o);
    return o;
  };
  const std::vector<std::pair<std::string, DecodeOptions>> cases = {
      {"beam size", with([](DecodeOptions& o) { o.beam_size = INT_MAX; })},
      {"n-best", with([](DecodeOptions& o) { o.beam_size = 4, o.n_best = 5000; })},
      {"temperature", with([](DecodeOptions& o) { o.sample = true, o.temperature = INFINITY; })},
      {"length penalty", with([](DecodeOptions& o) { o.length_penalty = NAN; })},
      {"repetition penalty", with([](DecodeOptions& o) { o.repetition_penalty = INFINITY; })},
      {"top-p", with([](DecodeOptions& o) { o.sample = true, o.top_p = NAN; })},
      {"forced BOS", with([](DecodeOptions& o) { o.forced_bos_token_id = -1; })},
      {"forced BOS", with([](DecodeOptions& o) { o.forced_bos_token_id = 1 << 30; })},
  };
  for (const auto& [what, options] : cases) {
    const std::string error = error_of([&, &options = options] { translator.translate({"Hello world."}, options); });
    EXPECT_NE(error.find(what), std::string::npos) << what << ": " << error;
  }
  BatchOptions no_batch;
  no_batch.batch_size = 0;
  const std::string error =
      error_of([&] { translator.translate({"Hello world."}, with([](DecodeOptions&) {}), no_batch); });
  EXPECT_NE(error.find("batch size"), std::string::npos) << error;
}

TEST(HardeningPositions, MarianTargetLengthIsCappedAtItsPositionTable) {
  const ScratchModel model(kMarian);
  model.set_json("config.json", "max_position_embeddings", "12");
  const Translator translator(model.dir());
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = 200;
  options.min_new_tokens = 100;  // never stops early: runs into the cap
  const auto results = translator.translate({"Hello world.", "A second sentence, a little longer than that."}, options);
  for (const auto& result : results) EXPECT_EQ(result.hypotheses[0].ids.size(), 12u);
  bool capped = false;
  for (const ResolvedSetting& s : translator.resolved_settings(options))
    if (s.name == "max_length") capped = s.value == "13" && s.source.find("capped") != std::string::npos;
  EXPECT_TRUE(capped);
}

TEST(HardeningPositions, FairseqTablesGrowLikeHuggingFace) {
  // M2M100/NLLB compute positions past max_position_embeddings (HF's make_weights): a model
  // with a 6-row table translates exactly as the same model with its full table.
  for (const std::string fixture : {"m2m100", "nllb"}) {
    const ScratchModel small(fixture);
    small.set_json("config.json", "max_position_embeddings", "6");
    const Translator reference(testing::fixture_dir(fixture));
    const Translator grown(small.dir());
    DecodeOptions options;
    options.beam_size = 2;
    options.max_new_tokens = 30;
    options.min_new_tokens = 25;
    const std::vector<std::vector<int64_t>> source = {reference.encode("Hi")};
    ASSERT_LE(source[0].size(), 6u);
    const auto expected = reference.translate_ids(source, options)[0].hypotheses[0];
    const auto actual = grown.translate_ids(source, options)[0].hypotheses[0];
    EXPECT_EQ(actual.ids, expected.ids) << fixture;
    EXPECT_EQ(actual.score, expected.score) << fixture;
    EXPECT_GE(actual.ids.size(), 25u) << fixture;
  }
}

TEST(HardeningThreads, ThreadsBeyondTheCoresAreCapped) {
  ModelOptions options;
  options.threads = 1024;
  const Translator translator(testing::fixture_dir(kMarian), options);
  cpu_set_t set;
  ASSERT_EQ(::sched_getaffinity(0, sizeof set, &set), 0);
  EXPECT_LE(at::get_num_threads(), CPU_COUNT(&set));
  DecodeOptions decode;
  decode.max_new_tokens = 5;
  EXPECT_EQ(translator.translate({"a", "b", "c", "d", "e"}, decode).size(), 5u);
  at::set_num_threads(1);
}

TEST(HardeningInput, LongLinesAreTokenizedFromABoundedPrefixWithTheExactCount) {
  // Up to the prefix the ids are those of tokenizing the whole line; the dropped count is
  // exact (pieces never cross spaces). 40,000 words: ~160 KB, beyond the 33 KB prefix.
  const Translator translator(testing::fixture_dir(kMarian));
  std::string line;
  for (int i = 0; i < 40000; ++i) line += (i % 7 ? "word " : "another ");
  line += "end.";
  const std::vector<int64_t> whole = translator.encode(line);
  DecodeOptions options;
  options.max_new_tokens = 3;
  const TranslationResult result = translator.translate({line}, options)[0];
  const int64_t limit = 512;  // the fixture's max_position_embeddings
  EXPECT_EQ(result.truncated_tokens, static_cast<int64_t>(whole.size()) - limit);
  std::vector<int64_t> head(whole.begin(), whole.begin() + limit);
  head.back() = whole.back();
  const TranslationResult expected = translator.translate_ids({head}, options)[0];
  EXPECT_EQ(result.hypotheses[0].ids, expected.hypotheses[0].ids);
}

}  // namespace
}  // namespace ordo
