// The `ordo` binary, run as a user runs it: stdin/stdout, files, formats, and bad input.
// ctest-label: integration
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "models/checkpoint.h"
#include "nn/packed_gemm.h"
#include "ordo/alignment.h"
#include "ordo/model_types.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using ordo::testing::TempDir;

using ordo::testing::CliRun;
using ordo::testing::read_file;

// Runs `ordo <args>` with `input` on stdin.
CliRun ordo(const std::string& args, const std::string& input = "") { return ordo::testing::run_ordo(args, input); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream s(text);
  for (std::string line; std::getline(s, line);) lines.push_back(line);
  return lines;
}

const std::string kFixture = "marian_opus_en_mg";
std::string model_arg() { return "-m '" + ordo::testing::fixture_dir(kFixture) + "'"; }

// The golden sentences without embedded newlines, and HF's greedy texts for them.
std::pair<std::vector<std::string>, std::vector<std::string>> golden_lines() {
  const json golden = ordo::testing::load_golden(kFixture);
  std::vector<std::string> sources, texts;
  for (size_t i = 0; i < golden["sentences"].size(); ++i) {
    const std::string s = golden["sentences"][i];
    if (s.find('\n') != std::string::npos) continue;
    sources.push_back(s);
    texts.push_back(s.empty() ? "" : golden["generation"]["greedy"]["per_sentence"][i]["texts"][0].get<std::string>());
  }
  return {sources, texts};
}

TEST(Cli, TranslatesStdinLikeHuggingFaceAndKeepsEmptyLines) {
  const auto [sources, expected] = golden_lines();
  std::string input;
  for (const std::string& s : sources) input += s + "\n";
  const CliRun run = ordo("translate " + model_arg() + " --max-length 20 --beam-size 1", input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out), expected);
}

// Two sentences around an empty line, translated from a file into a JSON-lines file with the
// 3 best of 4 beams, once for the tests that read it.
struct JsonRun {
  TempDir dir;
  CliRun run;
  std::vector<std::string> lines;  // of the output file

  JsonRun() {
    dir.write("in.txt", "Where is the train station?\n\nMy neighbour planted three apple trees.\n");
    run = ordo("translate " + model_arg() + " -i '" + dir.file("in.txt") + "' -o '" + dir.file("out.jsonl") +
               "' --json --beam-size 4 --n-best 3 --max-length 10");
    lines = lines_of(read_file(dir.file("out.jsonl")));
  }
};

const JsonRun& n_best_json() {
  static const JsonRun made;
  return made;
}

TEST(Cli, TranslatesAFileIntoAJsonLineFilePerInputLine) {
  const JsonRun& json_run = n_best_json();
  ASSERT_EQ(json_run.run.exit_code, 0) << json_run.run.err;
  EXPECT_TRUE(json_run.run.out.empty());
  ASSERT_EQ(json_run.lines.size(), 3u);
  for (const std::string& line : json_run.lines) {
    const json j = json::parse(line);
    EXPECT_TRUE(j.contains("text") && j.contains("tokens") && j.contains("score") && j.contains("n_best")) << line;
  }
}

TEST(Cli, JsonLinesHoldTheNBestHypothesesBestFirst) {
  const JsonRun& json_run = n_best_json();
  ASSERT_EQ(json_run.run.exit_code, 0) << json_run.run.err;
  ASSERT_EQ(json_run.lines.size(), 3u);
  for (size_t i : {0, 2}) {
    const json j = json::parse(json_run.lines[i]);
    ASSERT_EQ(j["n_best"].size(), 3u) << i;
    EXPECT_EQ(j["text"], j["n_best"][0]["text"]) << i;
    EXPECT_GE(j["n_best"][0]["score"].get<double>(), j["n_best"][1]["score"].get<double>()) << i;
  }
}

TEST(Cli, AnEmptyLineGivesOneEmptyJsonHypothesis) {
  const JsonRun& json_run = n_best_json();
  ASSERT_EQ(json_run.lines.size(), 3u) << json_run.run.err;
  const json empty = json::parse(json_run.lines[1]);
  EXPECT_EQ(empty["n_best"].size(), 1u);
  EXPECT_EQ(empty["text"], "");
}

TEST(Cli, TextNBestLinesStartWithTheirInputLineNumber) {
  TempDir dir;
  const std::string in =
      dir.write("in.txt", "Where is the train station?\n\nMy neighbour planted three apple trees.\n");
  const CliRun run = ordo("translate " + model_arg() + " -i '" + in + "' --beam-size 4 --n-best 2 --max-length 10");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto nbest = lines_of(run.out);
  ASSERT_EQ(nbest.size(), 4u + 1u);  // 2 + 2 hypotheses, and the empty line's one
  EXPECT_EQ(nbest[0].rfind("0 ||| ", 0), 0u);
  EXPECT_EQ(nbest[2].rfind("1 ||| ", 0), 0u);
  EXPECT_EQ(nbest[3].rfind("2 ||| ", 0), 0u);
}

// Three lines, the second not UTF-8, one sentence per batch.
const CliRun& bad_second_line() {
  static const CliRun run =
      ordo("translate " + model_arg() + " --max-length 5 --batch-size 1", "Hello.\nbad \xff byte\nmore\n");
  return run;
}

TEST(Cli, InvalidUtf8IsAnErrorNamingTheLine) {
  EXPECT_EQ(bad_second_line().exit_code, 1);
  EXPECT_NE(bad_second_line().err.find("stdin line 2: invalid UTF-8"), std::string::npos) << bad_second_line().err;
}

TEST(Cli, LinesBeforeInvalidUtf8AreStillWritten) {
  ASSERT_EQ(bad_second_line().exit_code, 1);
  EXPECT_EQ(lines_of(bad_second_line().out).size(), 1u);
}

// BART's byte-level tokenizer would give the mark's bytes to the model (SentencePiece drops it).
TEST(Cli, ALeadingByteOrderMarkIsNotPartOfTheFirstInputLine) {
  TempDir dir;
  const std::string args = "translate -m '" + ordo::testing::fixture_dir("bart") + "' --max-length 8 --json -i ";
  const CliRun plain = ordo(args + "'" + dir.write("plain.txt", "Hello world.\n") + "'");
  const CliRun marked = ordo(args + "'" + dir.write("marked.txt", "\xef\xbb\xbfHello world.\n") + "'");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(marked.out, plain.out) << marked.err;
}

// A translation with a model folder that does not exist into an output file that does.
struct BadModelRun {
  TempDir dir;
  std::string out = dir.write("out.txt", "precious\n");
  CliRun run = ordo("translate -m /nonexistent/model -o '" + out + "'", "Hello\n");
};

const BadModelRun& bad_model_folder() {
  static const BadModelRun made;
  return made;
}

TEST(Cli, ABadModelFolderIsAnErrorNamingItsConfigJson) {
  const CliRun& run = bad_model_folder().run;
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("/nonexistent/model/config.json"), std::string::npos) << run.err;
}

TEST(Cli, ABadModelFolderLeavesTheOutputFileUntouched) {
  ASSERT_EQ(bad_model_folder().run.exit_code, 1);
  EXPECT_EQ(read_file(bad_model_folder().out), "precious\n");
}

const std::string kBikeSentence = "A man is riding a bike.\n";

// `ordo translate` without --model.
const CliRun& with_the_default_model() {
  static const CliRun run = ordo("translate", kBikeSentence);
  return run;
}

TEST(Cli, WithoutAModelTheBundledEnDeModelTranslates) {
  const CliRun& by_default = with_the_default_model();
  ASSERT_EQ(by_default.exit_code, 0) << by_default.err;
  ASSERT_EQ(lines_of(by_default.out).size(), 1u);
  EXPECT_NE(by_default.out.find("Fahrrad"), std::string::npos) << by_default.out;
}

TEST(Cli, ABundledModelCanBeNamedByItsFolderName) {
  ASSERT_EQ(with_the_default_model().exit_code, 0) << with_the_default_model().err;
  const CliRun by_name = ordo("translate -m en-de", kBikeSentence);
  EXPECT_EQ(by_name.out, with_the_default_model().out) << by_name.err;
}

TEST(Cli, TheBundledDeEnModelTranslatesIntoEnglish) {
  const CliRun other_direction = ordo("translate -m de-en", "Ein Mann fährt Fahrrad.\n");
  ASSERT_EQ(other_direction.exit_code, 0) << other_direction.err;
  EXPECT_NE(other_direction.out.find("bike"), std::string::npos) << other_direction.out;
}

TEST(Cli, AnUnknownModelNameIsAnErrorSayingWhereItLooked) {
  const CliRun unknown = ordo("translate -m no-such-model", kBikeSentence);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("--model 'no-such-model' is not a folder"), std::string::npos) << unknown.err;
  EXPECT_NE(unknown.err.find("models/no-such-model"), std::string::npos) << unknown.err;
  EXPECT_TRUE(unknown.out.empty());
}

// The golden lines as stdin, and the lines Hugging Face translated them into.
std::pair<std::string, std::vector<std::string>> golden_input() {
  const auto [sources, expected] = golden_lines();
  std::string input;
  for (const std::string& s : sources) input += s + "\n";
  return {input, expected};
}

// --inter-threads with small batches and the float32 compute type spelled out: the same
// lines as the default run.
TEST(Cli, SpeedOptionsGiveTheLinesOfTheDefaultRun) {
  const auto [input, expected] = golden_input();
  const CliRun run = ordo("translate " + model_arg() +
                              " --max-length 20 --beam-size 1 --compute-type float32 --inter-threads 2 --batch-size 2"
                              " --batch-tokens 40",
                          input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out), expected);
}

// Reduced precision runs (where the CPU has it; elsewhere it is refused with a clear error).
void expect_every_line_translated(const std::string& type, ordo::nn::GemmType gemm) {
  if (!ordo::nn::gemm_type_supported(gemm)) GTEST_SKIP() << type << " is refused on this CPU";
  const auto [input, expected] = golden_input();
  const CliRun run = ordo("translate " + model_arg() + " --max-length 20 --compute-type " + type, input);
  ASSERT_EQ(run.exit_code, 0) << type << ": " << run.err;
  EXPECT_EQ(lines_of(run.out).size(), expected.size()) << type;
}

TEST(Cli, TheBFloat16ComputeTypeTranslatesEveryLine) {
  expect_every_line_translated("bfloat16", ordo::nn::GemmType::kBFloat16);
}

TEST(Cli, TheInt8ComputeTypeTranslatesEveryLine) { expect_every_line_translated("int8", ordo::nn::GemmType::kInt8); }

TEST(Cli, AComputeTypeUnderAnotherNameIsRefusedNamingTheOption) {
  const CliRun run = ordo("translate " + model_arg() + " --compute-type float16", "Hello\n");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("compute-type"), std::string::npos) << run.err;
}

// ORDO_ISA (kernels/isa.h) picks the body of ordo's own kernels; the AVX-512 and AVX2 bodies sum in
// the same fixed order with the same fused multiply-adds, so they give the same ids and scores,
// bit for bit (json doubles). (The baseline x86-64 body has no FMA: its bits differ.)
void expect_avx2_bits_equal_avx512_bits(const std::string& compute) {
  const auto [sources, expected] = golden_lines();
  std::string input;
  for (const std::string& s : sources) input += s + "\n";
  std::string first;
  for (const char* isa : {"avx512", "avx2"}) {
    TempDir dir;
    const std::string in = dir.write("stdin", input);
    const CliRun run = ordo::testing::run_shell(
        std::string("ORDO_ISA=") + isa + " " + ORDO_BINARY_DIR + "/ordo translate " + model_arg() +
            " --json --beam-size 4 --n-best 2 --max-length 20 " + "--compute-type " + compute + " < '" + in + "'",
        dir);
    ASSERT_EQ(run.exit_code, 0) << isa << ": " << run.err;
    ASSERT_EQ(lines_of(run.out).size(), sources.size()) << isa;
    if (first.empty()) first = run.out;
    EXPECT_EQ(run.out, first) << compute << ": ORDO_ISA=" << isa << " differs from avx512";
  }
}

TEST(Cli, Avx2KernelsGiveTheFloat32BitsOfAvx512Ones) { expect_avx2_bits_equal_avx512_bits("float32"); }

TEST(Cli, Avx2KernelsGiveTheInt8BitsOfAvx512Ones) { expect_avx2_bits_equal_avx512_bits("int8"); }

TEST(Cli, NBestAboveTheBeamSizeIsAnErrorNamingNBest) {
  const CliRun run = ordo("translate " + model_arg() + " --beam-size 2 --n-best 3", "Hello\n");
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("n-best"), std::string::npos) << run.err;
}

TEST(Cli, AZeroBeamSizeIsAnError) { EXPECT_NE(ordo("translate --beam-size 0").exit_code, 0); }

TEST(Cli, AMissingInputFileIsAnError) { EXPECT_NE(ordo("translate -m x -i /nonexistent/input.txt").exit_code, 0); }

TEST(Cli, TranslateHelpListsEveryOption) {
  const CliRun run = ordo("translate --help");
  EXPECT_EQ(run.exit_code, 0);
  for (const char* flag :
       {"--model", "--input", "--output", "--beam-size", "--n-best", "--max-length", "--min-length", "--batch-size",
        "--threads", "--json", "--compute-type", "--inter-threads", "--batch-tokens"})
    EXPECT_NE(run.out.find(flag), std::string::npos) << flag;
}

// The help (and the man page made from it) names every model type the library reads.
TEST(Cli, HelpNamesEverySupportedModelType) {
  const CliRun run = ordo("--help");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> types = ordo::supported_model_types();
  EXPECT_GE(types.size(), 8u);
  for (const std::string& type : types) EXPECT_NE(run.out.find(" " + type), std::string::npos) << type;
}

// Runs a shell command line (for redirections the ordo() helper does not make).
CliRun shell(const std::string& command, const TempDir& dir) { return ordo::testing::run_shell(command, dir); }

TEST(CliPositions, PrintsTheTextbookTable) {
  // The table published for n = 100, d = 4 (positions 0-3), as printed. (The published
  // 0.29552023 at position 3 is a typo of sin(0.3) = 0.2955202067: printed 0.29552021.)
  const CliRun run = ordo("positions --length 100 --dim 4 --base 100 --layout interleaved");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::vector<std::string> lines = lines_of(run.out);
  ASSERT_EQ(lines.size(), 101u);
  const std::vector<std::vector<std::string>> expected = {
      {"0", "0", "1", "0", "1"},
      {"1", "0.84147098", "0.54030231", "0.09983342", "0.99500417"},
      {"2", "0.90929743", "-0.41614684", "0.19866933", "0.98006658"},
      {"3", "0.14112001", "-0.9899925", "0.29552021", "0.95533649"}};
  for (size_t p = 0; p < expected.size(); ++p) {
    std::stringstream row(lines[p + 1]);
    std::vector<std::string> cells;
    for (std::string cell; row >> cell;) cells.push_back(cell);
    EXPECT_EQ(cells, expected[p]) << lines[p + 1];
  }
  EXPECT_NEAR(std::stod(expected[3][3]), std::sin(0.3), 5e-9);
}

// A model's own layout, offset and width.
TEST(CliPositions, AFairseqTableStartsPastThePaddingRow) {
  // fairseq (M2M100) starts at row padding_idx + 1.
  const CliRun run = ordo("positions -m '" + ordo::testing::fixture_dir("m2m100") + "' --length 3 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json table = json::parse(run.out);
  EXPECT_EQ(table["layout"], "fairseq");
  EXPECT_EQ(table["offset"], 2);
  EXPECT_EQ(table["dim"], 32);
  EXPECT_NEAR(table["values"][1][0].get<double>(), std::sin(3.0), 1e-6);  // position 1 = table row 3
}

// Pegasus-X computes its positions on the fly (no table in the model): shown all the same.
TEST(CliPositions, APegasusXModelShowsItsComputedPositions) {
  const CliRun run = ordo("positions -m '" + ordo::testing::fixture_dir("pegasus_x") + "' --length 3 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const json table = json::parse(run.out);
  EXPECT_EQ(table["layout"], "pegasus-x");
  EXPECT_EQ(table["offset"], 0);
  EXPECT_EQ(table["dim"], 16);
  EXPECT_NEAR(table["values"][1][0].get<double>(), std::sin(1.0), 1e-6);  // sines first
  EXPECT_NEAR(table["values"][1][8].get<double>(), std::cos(1.0), 1e-6);  // cosines from d/2
  EXPECT_NEAR(table["values"][2][1].get<double>(), std::sin(2.0 * std::pow(10000.0, -1.0 / 7)), 1e-6);
}

TEST(CliPositions, CsvOfASinCosTableHasTheSineOfThePositionFirst) {
  const CliRun run = ordo("positions -m '" + ordo::testing::fixture_dir(kFixture) + "' --length 2 --format csv");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_GE(lines_of(run.out).size(), 3u) << run.out;
  EXPECT_EQ(lines_of(run.out)[0].substr(0, 19), "position,dim0,dim1,");
  EXPECT_EQ(lines_of(run.out)[2].substr(0, 13), "1,0.84147098,");  // sin-cos layout: dim 0 = sin(p)
}

// The output of `ordo positions <args> --format none --heatmap h.svg --curves c.png` checked:
// nothing on stdout, an SVG and a PNG.
void expect_pictures(const std::string& args) {
  TempDir dir;
  const CliRun run = ordo("positions " + args + " --format none --heatmap '" + dir.file("h.svg") + "' --curves '" +
                          dir.file("c.png") + "'");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(read_file(dir.file("h.svg")).substr(0, 5), "<?xml");
  EXPECT_EQ(read_file(dir.file("c.png")).substr(1, 3), "PNG");
}

TEST(CliPositions, PicturesAreWrittenInTheFormatOfTheirExtension) {
  expect_pictures("--length 50 --dim 16 --dims 4,5,6,7");
}

// Bad requests are one clear line.
TEST(CliPositions, ADimensionPastTheTableIsAnErrorNamingDims) {
  TempDir dir;
  const CliRun run = ordo("positions --length 5 --dim 4 --curves '" + dir.file("c.png") + "' --dims 9");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--dims"), std::string::npos) << run.err;
}

TEST(CliPositions, AnUnknownPictureExtensionIsAnErrorNamingTheFile) {
  TempDir dir;
  const CliRun run = ordo("positions --length 5 --dim 4 --heatmap '" + dir.file("h.gif") + "'");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("h.gif"), std::string::npos) << run.err;
}

TEST(CliPositions, WithoutAModelTheWidthIsRequired) {
  const CliRun run = ordo("positions --length 5");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--dim"), std::string::npos) << run.err;
}

// T5 has no position table: `ordo positions -m` shows the relative position bias of block 0,
// per head against the distance key - query, through the buckets worked out by hand in
// relative_position_test.cpp (encoder bidirectional -N..N, decoder causal -N..0).
void expect_t5_bias_table(const std::string& stack) {
  for (const char* fixture : {"t5", "t5_v1"}) {
    const std::unique_ptr<ordo::models::Checkpoint> weights =
        ordo::models::open_checkpoint(ordo::testing::fixture_dir(fixture));
    const std::string model = "positions -m '" + ordo::testing::fixture_dir(fixture) + "' --length 20 --format json";
    const CliRun run = ordo(model + (stack == "decoder" ? " --decoder" : ""));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const json t = json::parse(run.out);
    EXPECT_EQ(t["kind"], "relative_position_bias");
    EXPECT_EQ(t["stack"], stack);
    EXPECT_EQ(t["first"], -20);
    EXPECT_EQ(t["last"], stack == "encoder" ? 20 : 0);
    const at::Tensor table = weights->get(stack + ".block.0.layer.0.SelfAttention.relative_attention_bias.weight");
    ASSERT_EQ(t["heads"].get<int64_t>(), table.size(1));
    const auto bucket_of = [&](int64_t distance) { return t["buckets"][distance + 20].get<int64_t>(); };
    if (stack == "encoder") {  // bidirectional: 16 + n after the query, 8 + log buckets from n = 8
      EXPECT_EQ(bucket_of(0), 0);
      EXPECT_EQ(bucket_of(-1), 1);
      EXPECT_EQ(bucket_of(1), 17);
      EXPECT_EQ(bucket_of(-8), 8);
      EXPECT_EQ(bucket_of(-12), 9);
      EXPECT_EQ(bucket_of(-16), 10);
      EXPECT_EQ(bucket_of(16), 26);
    } else {  // causal: n exact below 16, then 16 + log buckets
      EXPECT_EQ(bucket_of(-1), 1);
      EXPECT_EQ(bucket_of(-15), 15);
      EXPECT_EQ(bucket_of(-16), 16);
      EXPECT_EQ(bucket_of(-20), 17);
    }
    for (int64_t h = 0; h < table.size(1); ++h)
      for (int64_t d = -20; d <= t["last"].get<int64_t>(); ++d)
        ASSERT_EQ(t["values"][h][d + 20].get<float>(), table[bucket_of(d)][h].item<float>())
            << fixture << " " << stack << " head " << h << " distance " << d;
  }
}

TEST(CliPositions, T5EncoderShowsItsBiasThroughBidirectionalBuckets) { expect_t5_bias_table("encoder"); }

TEST(CliPositions, T5DecoderShowsItsBiasThroughCausalBuckets) { expect_t5_bias_table("decoder"); }

std::string t5_arg() { return "-m '" + ordo::testing::fixture_dir("t5") + "'"; }

// A heatmap of heads x distances and a curve per head; --dims picks heads.
TEST(CliPositions, T5BiasIsPicturedForTheChosenHeads) { expect_pictures(t5_arg() + " --dims 0,3"); }

TEST(CliPositions, T5BiasCsvRowsAreADistanceItsBucketThenAValuePerHead) {
  const CliRun run = ordo("positions " + t5_arg() + " --format csv --length 2 --decoder");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out.substr(0, run.out.find('\n')), "distance,bucket,head0,head1,head2,head3");
  EXPECT_EQ(std::count(run.out.begin(), run.out.end(), '\n'), 4);  // header + distances -2, -1, 0
}

TEST(CliPositions, AHeadPastT5sIsAnErrorNamingIt) {
  const CliRun run = ordo("positions " + t5_arg() + " --dims 4 --format none");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("head 4"), std::string::npos) << run.err;
}

TEST(CliPositions, AWidthForT5IsAnErrorNamingDim) {
  const CliRun run = ordo("positions " + t5_arg() + " --dim 8");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--dim"), std::string::npos) << run.err;
}

TEST(CliPositions, LearnedTablesOfBartAndMBartAreTheCheckpointsRows) {
  for (const char* fixture : {"bart", "mbart50"}) {
    const std::unique_ptr<ordo::models::Checkpoint> weights =
        ordo::models::open_checkpoint(ordo::testing::fixture_dir(fixture));
    for (const std::string stack : {"encoder", "decoder"}) {
      const std::string model = "positions -m '" + ordo::testing::fixture_dir(fixture) + "' --length 5 --format json";
      const CliRun run = ordo(model + (stack == "decoder" ? " --decoder" : ""));
      ASSERT_EQ(run.exit_code, 0) << run.err;
      const json table = json::parse(run.out);
      EXPECT_EQ(table["layout"], "learned");
      EXPECT_EQ(table["offset"], 2);
      EXPECT_EQ(table["stack"], stack);
      const at::Tensor rows = weights->get("model." + stack + ".embed_positions.weight");
      ASSERT_EQ(table["dim"].get<int64_t>(), rows.size(1));
      ASSERT_EQ(table["values"].size(), 5u);
      for (int64_t p = 0; p < 5; ++p)  // position p is row p + 2, as the embedder adds it
        for (int64_t j = 0; j < rows.size(1); ++j)
          ASSERT_EQ(table["values"][p][j].get<float>(), rows[p + 2][j].item<float>()) << fixture << " " << stack;
    }
  }
}

std::string bart_arg() { return "-m '" + ordo::testing::fixture_dir("bart") + "'"; }

TEST(CliPositions, LearnedTablesArePicturedAsSinusoidalOnes) { expect_pictures(bart_arg()); }

TEST(CliPositions, ALearnedTableHasNoRowsPastMaxPositionEmbeddings) {
  const CliRun run = ordo("positions " + bart_arg() + " --length 1025 --format none");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("max_position_embeddings"), std::string::npos) << run.err;
}

// --decoder only where the stacks' tables differ.
TEST(CliPositions, DecoderIsRefusedForAModelWhoseStacksShareATable) {
  const CliRun run = ordo("positions -m '" + ordo::testing::fixture_dir("m2m100") + "' --length 3 --decoder");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--decoder"), std::string::npos) << run.err;
}

TEST(CliPositions, DecoderIsRefusedWithoutAModel) {
  const CliRun run = ordo("positions --length 3 --dim 4 --decoder");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--decoder"), std::string::npos) << run.err;
}

// The bart fixture with T5-style task_specific_params in its config.json, made once.
struct TaskFolder {
  TempDir dir;
  TaskFolder() {
    ordo::testing::copy_dir(ordo::testing::fixture_dir("bart"), dir.path());
    json config = json::parse(std::ifstream(dir.file("config.json")));
    config["task_specific_params"] = {
        {"summarization", {{"prefix", "summarize: "}, {"num_beams", 2}, {"length_penalty", 1.5}, {"max_length", 12}}},
        {"translation_en_to_de", {{"prefix", "translate English to German: "}, {"num_beams", 3}}}};
    dir.write("config.json", config.dump(2));
  }
};

std::string tasks_arg() {
  static const TaskFolder folder;
  return "-m '" + folder.dir.path() + "'";
}

const std::string kTowerText = "The tower is 324 metres tall, about the same height as an 81-storey building.\n";

TEST(CliTasks, PrintConfigSaysWhereSummarizeTakesEachSettingFrom) {
  const CliRun run = ordo("summarize " + tasks_arg() + " --print-config");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string from_task = "  (config.json task_specific_params.summarization)";
  for (const std::string& line : std::vector<std::string>{
           "task = summarization  (ordo summarize: the folder's own)", "prefix = \"summarize: \"" + from_task,
           "beam_size = 2" + from_task, "length_penalty = 1.5" + from_task, "max_length = 12" + from_task,
           "no_repeat_ngram_size = 3  (generation_config.json)"})
    EXPECT_NE(run.out.find(line + "\n"), std::string::npos) << line << "\n" << run.out;
}

TEST(CliTasks, OptionsOverTheTasksSettingsAreShownAsOptions) {
  const CliRun run = ordo("summarize " + tasks_arg() + " --beam-size 1 --task summarization --print-config");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("task = summarization  (option)\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("beam_size = 1  (option)\n"), std::string::npos) << run.out;
}

TEST(CliTasks, TranslateTakesTheTaskNamedByTaskOnly) {
  const CliRun run = ordo("translate " + tasks_arg() + " --task translation_en_to_de --print-config");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(
                "prefix = \"translate English to German: \"  (config.json task_specific_params.translation_en_to_de)"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("summarization"), std::string::npos) << "translate picks no task itself\n" << run.out;
}

TEST(CliTasks, TheSummaryIsThatOfThePrefixedTextUnderTheTasksSettings) {
  const CliRun run = ordo("summarize " + tasks_arg() + " -q", kTowerText);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string by_hand_args = "summarize " + bart_arg() + " -q --beam-size 2 --length-penalty 1.5 --max-length 11";
  const CliRun by_hand = ordo(by_hand_args, "summarize: " + kTowerText);
  ASSERT_EQ(by_hand.exit_code, 0) << by_hand.err;
  EXPECT_EQ(run.out, by_hand.out);
  EXPECT_NE(run.out, ordo(by_hand_args, kTowerText).out);
}

TEST(CliTasks, ATaskTheFolderLacksIsAnErrorListingTheTasksItHas) {
  const CliRun run = ordo("translate " + tasks_arg() + " --task translation_en_to_fr", kTowerText);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("unknown task 'translation_en_to_fr'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("summarization, translation_en_to_de"), std::string::npos) << run.err;
}

TEST(CliTasks, ATaskForAFolderWithoutTasksIsAnErrorSayingSo) {
  const CliRun run = ordo("summarize " + bart_arg() + " --task summarization", kTowerText);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("no task_specific_params"), std::string::npos) << run.err;
}

std::string greedy4_args() { return "translate " + model_arg() + " --beam-size 1 --max-length 4 "; }

// "Hello there.", "How are you?" and "Good." each translated as a line of its own.
const std::vector<std::string>& alone() {
  static const std::vector<std::string> lines =
      lines_of(ordo(greedy4_args(), "Hello there.\nHow are you?\nGood.\n").out);
  return lines;
}

// Lines split into sentences and rejoined, as JSON: two sentences, an empty line, one sentence.
const CliRun& split_json() {
  static const CliRun run = ordo(greedy4_args() + "--split-sentences --json", "Hello there. How are you?\n\nGood.\n");
  return run;
}

TEST(CliDocuments, SplitSentencesGivesOneOutputLinePerInputLine) {
  ASSERT_EQ(split_json().exit_code, 0) << split_json().err;
  const std::vector<std::string> lines = lines_of(split_json().out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(json::parse(lines[1])["text"], "");
}

TEST(CliDocuments, SplitSentencesJoinsTheTranslationsOfALinesSentences) {
  ASSERT_EQ(split_json().exit_code, 0) << split_json().err;
  const json first = json::parse(lines_of(split_json().out).at(0));
  ASSERT_EQ(first["sentences"].size(), 2u);
  EXPECT_EQ(first["sentences"][0]["source"], "Hello there.");
  EXPECT_EQ(first["sentences"][1]["source"], "How are you?");
  EXPECT_EQ(first["text"],
            first["sentences"][0]["text"].get<std::string>() + " " + first["sentences"][1]["text"].get<std::string>());
}

TEST(CliDocuments, ASplitSentenceIsTranslatedAsALineOfItsOwn) {
  ASSERT_EQ(split_json().exit_code, 0) << split_json().err;
  const std::vector<std::string> lines = lines_of(split_json().out);
  ASSERT_EQ(lines.size(), 3u);
  ASSERT_EQ(alone().size(), 3u);
  EXPECT_EQ(json::parse(lines[0])["sentences"][1]["text"], alone()[1]);
  EXPECT_EQ(json::parse(lines[2])["text"], alone()[2]);
}

// Paragraphs are split into sentences by default.
TEST(CliDocuments, ParagraphsAreTranslatedSentenceBySentenceWithABlankLineBetween) {
  const CliRun run = ordo(greedy4_args() + "--paragraphs", "Hello there. How are you?\n\n\nGood.\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(alone().size(), 3u);
  EXPECT_EQ(run.out, alone()[0] + " " + alone()[1] + "\n\n" + alone()[2] + "\n");
}

TEST(CliDocuments, ADocumentKeepsItsLineStructure) {
  const CliRun run = ordo(greedy4_args() + "--document", "Hello there.\nHow are you?\n\nGood.");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  ASSERT_EQ(alone().size(), 3u);
  EXPECT_EQ(run.out, alone()[0] + "\n" + alone()[1] + "\n\n" + alone()[2] + "\n");
}

TEST(CliDocuments, NoSplitSentencesTranslatesEachParagraphWhole) {
  const CliRun run = ordo(greedy4_args() + "--paragraphs --no-split-sentences", "Hello there.\n");
  ASSERT_FALSE(alone().empty());
  EXPECT_EQ(run.out, alone()[0] + "\n");
}

TEST(CliDocuments, ParagraphsWithNBestAreAnErrorNamingNBest) {
  const CliRun run =
      ordo("translate " + model_arg() + " --max-length 4 --paragraphs --beam-size 2 --n-best 2", "Hello there.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--n-best"), std::string::npos) << run.err;
}

// --paragraphs and --document once wrote LF for the input's CR LF, and a bad byte on a
// paragraph's second line was reported on its first.
void expect_crlf_kept(const std::string& mode) {
  const std::string lf = "Hello there.\nHow are you?\n\nGood.\n";
  std::string crlf;
  for (char c : lf) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const CliRun with_lf = ordo(greedy4_args() + mode, lf), with_crlf = ordo(greedy4_args() + mode, crlf);
  ASSERT_EQ(with_lf.exit_code, 0) << with_lf.err;
  ASSERT_EQ(with_crlf.exit_code, 0) << with_crlf.err;
  std::string expected;
  for (char c : with_lf.out) expected += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(with_crlf.out, expected) << mode;
  EXPECT_EQ(std::count(with_lf.out.begin(), with_lf.out.end(), '\r'), 0) << mode;
}

TEST(CliDocuments, ParagraphsKeepTheInputsCrLfLineEnds) { expect_crlf_kept("--paragraphs"); }

TEST(CliDocuments, DocumentsKeepTheInputsCrLfLineEnds) { expect_crlf_kept("--document"); }

TEST(CliDocuments, ABadByteInAParagraphNamesItsOwnLine) {
  const CliRun run = ordo(greedy4_args() + "--paragraphs", "First line.\nSecond \xff line.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("stdin line 2: invalid UTF-8 at byte 8"), std::string::npos) << run.err;
}

// Contradictory options were once taken silently: --min-length above --max-length was cut,
// --source-lang on a one-pair model ignored, --preset /x.json looked for /x.json.json.
TEST(CliHardening, MinLengthAboveMaxLengthIsRefusedNamingBoth) {
  const CliRun run = ordo("translate " + model_arg() + " --min-length 30 --max-length 5", "Hello.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--min-length 30 is above --max-length 5"), std::string::npos) << run.err;
  EXPECT_EQ(run.out, "");
}

TEST(CliHardening, MinLengthAboveTheModelsMaximumIsRefusedNamingIt) {
  const CliRun run = ordo("translate " + model_arg() + " --min-length 600", "Hello.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--min-length 600 is above the maximum length of 511 new tokens"), std::string::npos)
      << run.err;
}

TEST(CliHardening, MinLengthWithinMaxLengthIsAccepted) {
  const CliRun run = ordo("translate " + model_arg() + " --min-length 3 --max-length 5 --beam-size 1", "Hello.\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// The fixture translates en into mg (tokenizer_config.json).
TEST(CliHardening, ASourceLanguageTheModelDoesNotTranslateFromIsRefused) {
  const CliRun run = ordo("translate " + model_arg() + " --source-lang fr", "Bonjour.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--source-lang 'fr'"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("from 'en' only"), std::string::npos) << run.err;
}

TEST(CliHardening, TheModelsOwnSourceLanguageIsAcceptedInAnyCase) {
  const CliRun run = ordo("translate " + model_arg() + " --source-lang EN --max-length 3", "Hello.\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

// Seeds outside [0, 2^63 - 1] are refused, not wrapped or saturated.
TEST(CliHardening, SeedsOutsideTheSigned64BitRangeAreRefused) {
  for (const std::string seed : {"-1", "18446744073709551616", "9223372036854775808", "1x"}) {
    const CliRun run = ordo("translate " + model_arg() + " --sample true --seed " + seed, "Hello.\n");
    EXPECT_EQ(run.exit_code, 2) << seed;
    EXPECT_NE(run.err.find("--seed"), std::string::npos) << seed << ": " << run.err;
  }
}

TEST(CliHardening, TheLargestSeedIsAccepted) {
  const CliRun run =
      ordo("translate " + model_arg() + " --sample true --max-length 3 --seed 9223372036854775807", "Hello.\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(CliHardening, AMissingPresetFileIsNamedAsGiven) {
  TempDir dir;
  const CliRun run = ordo("translate " + model_arg() + " --preset '" + dir.file("missing.json") + "'", "Hello.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find(dir.file("missing.json")), std::string::npos) << run.err;
  EXPECT_EQ(run.err.find("missing.json.json"), std::string::npos) << run.err;
}

TEST(CliHardening, AMissingPresetNameEndingInJsonGetsNoSecondSuffix) {
  const CliRun run = ordo("translate " + model_arg() + " --preset no_such_preset.json", "Hello.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(run.err.find("no_such_preset.json.json"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("no_such_preset.json"), std::string::npos) << run.err;
}

// Sentence 0 of the fixture as text, greedy as in the golden case, and Hugging Face's
// attention for it (attention.json).
struct AttentionCase {
  json expected;
  std::string sentence;
  AttentionCase() {
    std::ifstream in(ordo::testing::fixture_dir(kFixture) + "/attention.json");
    expected = json::parse(in)["sentences"][0];
    sentence = ordo::testing::load_golden(kFixture)["sentences"][0];
  }
};

const AttentionCase& attention_case() {
  static const AttentionCase made;
  return made;
}

std::string greedy20_args() { return "translate " + model_arg() + " --beam-size 1 --max-length 20 "; }

// The JSON line of the sentence with its attention weights, parsed (null when the run failed).
const json& attention_line() {
  static const json line = [] {
    const CliRun run = ordo(greedy20_args() + "--json --attention", attention_case().sentence + "\n");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? json::parse(run.out) : json();
  }();
  return line;
}

TEST(CliAttention, JsonWeightsEqualHuggingFaces) {
  const json& expected = attention_case().expected;
  ASSERT_EQ(expected["sentence_index"], 0);
  const json& line = attention_line();
  ASSERT_FALSE(line.is_null());
  EXPECT_EQ(line["source_tokens"].size(), expected["source_ids"].size());
  const json& attention = line["attention"];
  double worst = 0;
  for (size_t l = 0; l < expected["cross_attentions"].size(); ++l)
    for (size_t h = 0; h < expected["cross_attentions"][l].size(); ++h)
      for (size_t t = 0; t < expected["cross_attentions"][l][h].size(); ++t)
        for (size_t s = 0; s < expected["cross_attentions"][l][h][t].size(); ++s)
          worst = std::max(worst, std::abs(attention[l][h][t][s].get<double>() -
                                           expected["cross_attentions"][l][h][t][s].get<double>()));
  EXPECT_LE(worst, 1e-5);
  EXPECT_EQ(attention[0][0].size(), line["id_pieces"].size());
}

// "text ||| s-t ..." with one link per target piece, within range.
TEST(CliAttention, HardAlignmentLinksEachTargetPieceToASourceToken) {
  const json& line = attention_line();
  ASSERT_FALSE(line.is_null());
  const CliRun run = ordo(greedy20_args() + "--alignment hard", attention_case().sentence + "\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t bar = run.out.find(" ||| ");
  ASSERT_NE(bar, std::string::npos) << run.out;
  std::stringstream links(run.out.substr(bar + 5));
  size_t count = 0;
  for (std::string link; links >> link; ++count) {
    const size_t dash = link.find('-');
    ASSERT_NE(dash, std::string::npos) << link;
    EXPECT_LT(std::stoul(link.substr(0, dash)), attention_case().expected["source_ids"].size() - 1)
        << link;  // </s> left out
    EXPECT_EQ(std::stoul(link.substr(dash + 1)), count) << link;
  }
  EXPECT_EQ(count, line["tokens"].size());
}

// A soft alignment of the sentence, an empty line and "Hello.", with a picture per input line.
struct SoftAlignmentRun {
  TempDir dir;
  CliRun run = ordo(greedy20_args() + "--json --alignment soft --attention-plot '" + dir.file("plots") + "'",
                    attention_case().sentence + "\n\nHello.\n");
};

const SoftAlignmentRun& soft_alignment() {
  static const SoftAlignmentRun made;
  return made;
}

TEST(CliAttention, SoftAlignmentHasARowOfWeightsPerTargetPiece) {
  const json& line = attention_line();
  ASSERT_FALSE(line.is_null());
  const CliRun& run = soft_alignment().run;
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(lines_of(run.out).at(0))["alignment"].size(), line["tokens"].size());
}

TEST(CliAttention, AttentionPlotDrawsAPicturePerInputLine) {
  const SoftAlignmentRun& soft = soft_alignment();
  ASSERT_EQ(soft.run.exit_code, 0) << soft.run.err;
  EXPECT_EQ(read_file(soft.dir.file("plots/1.png")).substr(1, 3), "PNG");
  EXPECT_EQ(read_file(soft.dir.file("plots/3.png")).substr(1, 3), "PNG");
}

TEST(CliAttention, HardAlignmentCanBeOfWords) {
  const CliRun run = ordo(greedy20_args() + "--alignment hard --alignment-words", attention_case().sentence + "\n");
  EXPECT_EQ(run.exit_code, 0) << run.err;
}

TEST(CliAttention, AttentionWithoutJsonIsAnErrorNamingJson) {
  const CliRun run = ordo(greedy20_args() + "--attention", "Hello.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("--json"), std::string::npos) << run.err;
}

TEST(CliAttention, WordIndicesFollowSentencePieceWordStartMarks) {
  EXPECT_EQ(ordo::word_indices({u8"\u2581Ein", u8"\u2581Fahr", "rad", "."}), (std::vector<int64_t>{0, 1, 1, 1}));
}

TEST(CliAttention, WordIndicesFollowBpeWordEndMarks) {
  EXPECT_EQ(ordo::word_indices({"Fahr", "rad</w>", "ist</w>", ".</w>"}), (std::vector<int64_t>{0, 0, 1, 2}));
}

TEST(CliHardening, OptionErrorsAreOneLineNamingTheOption) {
  for (const std::string args :
       {"translate --beam-size 0", "translate --compute-type float16", "translate --bogus", "translate --threads -3"}) {
    const CliRun run = ordo(args);
    EXPECT_EQ(run.exit_code, 2) << args;
    EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << args << ": " << run.err;
    EXPECT_NE(run.err.find("--help"), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("Options:"), std::string::npos) << run.err;
  }
  EXPECT_NE(ordo("translate --beam-size 0").err.find("--beam-size"), std::string::npos);
  // NaN is no number of the table's range: refused as the flag is read (exit 2, one line).
  const CliRun nan = ordo("translate " + model_arg() + " --length-penalty nan", "Hello.\n");
  EXPECT_EQ(nan.exit_code, 2);
  EXPECT_NE(nan.err.find("--length-penalty: 'nan' must be a number from -100 to 100"), std::string::npos) << nan.err;
}

TEST(CliHardening, OutputOverTheInputIsRefusedAndTheInputKept) {
  TempDir dir;
  const std::string text = "Hello.\nGood morning.\n";
  const std::string in = dir.write("in.txt", text);
  ASSERT_EQ(std::system(("ln -s '" + in + "' '" + dir.file("link.txt") + "'").c_str()), 0);
  const std::string ordo_bin = std::string(ORDO_BINARY_DIR) + "/ordo translate " + model_arg() + " --max-length 5";
  for (const std::string command :
       {ordo_bin + " -i '" + in + "' -o '" + in + "'", ordo_bin + " -i '" + in + "' -o '" + dir.file("link.txt") + "'",
        ordo_bin + " -o '" + in + "' < '" + in + "'"}) {
    const CliRun run = shell(command, dir);
    EXPECT_EQ(run.exit_code, 1) << command;
    EXPECT_NE(run.err.find("is the input"), std::string::npos) << run.err;
    EXPECT_EQ(read_file(in), text) << command;
  }
}

TEST(CliHardening, PresetWithZeroBatchSizeIsRefused) {
  TempDir dir;
  const std::string preset =
      dir.write("p.json", R"({"task": "translation", "decoding": {}, "batching": {"batch_size": 0}})");
  const CliRun run = ordo("translate " + model_arg() + " --preset '" + preset + "'", "Hello.\n");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("batch_size"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("p.json"), std::string::npos) << run.err;
  // batch_size is how to run, not what to decode: in "decoding" it is refused, saying where it goes.
  const std::string misplaced = dir.write("q.json", R"({"task": "translation", "decoding": {"batch_size": 8}})");
  const CliRun wrong = ordo("translate " + model_arg() + " --preset '" + misplaced + "'", "Hello.\n");
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("\"batching\""), std::string::npos) << wrong.err;
}

TEST(CliHardening, MaxLengthBeyondThePositionsIsCappedWithAWarning) {
  const std::string input = "Hello.\nA second line.\nThird.\n";
  const CliRun run = ordo("translate " + model_arg() + " --beam-size 1 --max-length 100000", input);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out).size(), 3u);
  EXPECT_NE(run.err.find("--max-length 100000"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("at most 512 tokens"), std::string::npos) << run.err;
}

}  // namespace

namespace {

std::string pegasus_arg() { return "-m '" + ordo::testing::fixture_dir("pegasus") + "'"; }

const std::string kThreeParagraphs = "First paragraph line one.\nline two.\n\n\nSecond paragraph.\n\nThird.\n";

TEST(CliSummarize, ParagraphsGiveASummaryPerParagraph) {
  const CliRun run = ordo("summarize " + pegasus_arg() + " --paragraphs --max-length 5", kThreeParagraphs);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out).size(), 3u);
}

TEST(CliSummarize, ADocumentGivesOneSummary) {
  const CliRun run = ordo("summarize " + pegasus_arg() + " --document --max-length 5", kThreeParagraphs);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out).size(), 1u);
}

TEST(CliSummarize, WithoutAModeEachLineIsSummarizedEmptyLinesKept) {
  const CliRun run = ordo("summarize " + pegasus_arg() + " --max-length 5", kThreeParagraphs);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out).size(), 7u);
}

TEST(CliSummarize, DocumentWithParagraphsIsRefused) {
  EXPECT_EQ(ordo("summarize " + pegasus_arg() + " --document --paragraphs", kThreeParagraphs).exit_code, 1);
}

// Blank input (spaces, a NUL-only line, 100,000 blank lines) gives empty
// output, not text the model makes up.
TEST(CliSummarize, BlankInputGivesEmptyOutput) {
  const std::string hello = lines_of(ordo("translate " + model_arg() + " --max-length 10", "Hello.\n").out).at(0);
  ASSERT_FALSE(hello.empty());
  CliRun run =
      ordo("translate " + model_arg() + " --max-length 10", "   \n" + std::string("\0\0", 2) + "\nHello.\n \t \n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "\n\n" + hello + "\n\n");
  run = ordo("summarize " + pegasus_arg() + " --document --max-length 5", std::string(100000, '\n'));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, "\n");
  run = ordo("summarize " + pegasus_arg() + " --max-length 5 --json", "   \n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(json::parse(lines_of(run.out).at(0))["text"], "");
}

TEST(CliSummarize, LongDocumentWithLongInputTruncateIsCutWithAWarning) {
  std::string text;
  for (int i = 0; i < 800; ++i) text += "The cat sat on the mat. ";
  const CliRun run =
      ordo("summarize " + pegasus_arg() + " --document --long-input truncate --max-length 5", text + "\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("tokens dropped"), std::string::npos) << run.err;
  EXPECT_EQ(lines_of(run.out).size(), 1u);
}

TEST(CliPresets, PrintConfigShowsEachValueWithItsSource) {
  const CliRun run = ordo("summarize " + pegasus_arg() + " --print-config --no-repeat-ngram-size 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("beam_size = 8  (generation_config.json)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("no_repeat_ngram_size = 2  (option)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("early_stopping = true  (preset)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("batch_size = 8  (preset)"), std::string::npos) << run.out;  // "batching" of the preset
}

TEST(CliPresets, TranslateShowsTheTranslationPresetUnderItsOptions) {
  const CliRun run = ordo("translate " + pegasus_arg() + " --print-config --seed 7 --batch-tokens 500");
  EXPECT_NE(run.out.find("no_repeat_ngram_size = 0  (preset)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("seed = 7  (option)"), std::string::npos) << run.out;  // from the table, not resolved
  EXPECT_NE(run.out.find("batch_size = 32  (preset)"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("batch_tokens = 500  (option)"), std::string::npos) << run.out;
}

TEST(CliPresets, AnUnknownPresetIsAnErrorNamingItsFile) {
  const CliRun run = ordo("summarize " + pegasus_arg() + " --print-config --preset nonexistent");
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find("preset 'nonexistent.json' was not found"), std::string::npos) << run.err;
}

TEST(CliMultilingual, TargetLanguageFlag) {
  const json golden = ordo::testing::load_golden("nllb");
  const CliRun run = ordo(
      "translate -m '" + ordo::testing::fixture_dir("nllb") + "' --target-lang deu_Latn --beam-size 1 --max-length 20",
      golden["sentences"][0].get<std::string>() + "\n");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out).at(0), golden["generation"]["greedy"]["per_sentence"][0]["texts"][0].get<std::string>());
}

// mBART-50: --source-lang en_XX --target-lang de_DE gives the golden greedy texts (made with
// src_lang en_XX and forced_bos de_DE); an unknown code is refused naming it.
TEST(CliMultilingual, MBart50LanguageCodes) {
  const json golden = ordo::testing::load_golden("mbart50");
  const std::string model =
      "translate -m '" + ordo::testing::fixture_dir("mbart50") + "' --beam-size 1 --max-length 20";
  std::string input;
  std::vector<std::string> expected;
  for (int i : {0, 3, 4, 5}) {
    input += golden["sentences"][i].get<std::string>() + "\n";
    expected.push_back(golden["generation"]["greedy"]["per_sentence"][i]["texts"][0].get<std::string>());
  }
  const CliRun run = ordo(model + " --source-lang en_XX --target-lang de_DE", input);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(lines_of(run.out), expected);
  const CliRun unknown = ordo(model + " --target-lang deu_Latn", input);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown target language 'deu_Latn'"), std::string::npos) << unknown.err;
}

TEST(CliSampling, SameSeedSameOutput) {
  const std::string args = "translate " + model_arg() + " --sample true --temperature 2 --seed 5 --max-length 10";
  const CliRun a = ordo(args, "Where is the train station?\n"), b = ordo(args, "Where is the train station?\n");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
}

}  // namespace
