// Interactive decoding on the command line, through the real `ordo` binary: `ordo score` (against the
// transformers 4.31 goldens, and the round trip `ordo translate --json` -> `ordo score`) and
// `ordo translate --target-prefix-file`.
// ctest-label: integration
#include <cmath>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;
using testing::load_interactive;
using testing::run_ordo;
using testing::TempDir;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& line : lines) out += line + "\n";
  return out;
}

// `ordo score --json` gives transformers' teacher-forced log-probabilities (M2M100: the
// target language code is the first label, scored like the others).
TEST(CliScore, JsonLinesEqualTeacherForcing) {
  const json golden = load_interactive("m2m100");
  TempDir dir;
  std::vector<std::string> sources, targets;
  for (const json& c : golden["teacher_forced"]) {
    sources.push_back(c["source"].get<std::string>());
    targets.push_back(c["target"].get<std::string>());
  }
  const std::string src = dir.write("src.txt", joined(sources)), tgt = dir.write("tgt.txt", joined(targets));
  const auto run = run_ordo("score -m " + fixture_dir("m2m100") + " --target-lang de --batch-size 2 -i " + src +
                            " -r " + tgt + " --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto out = lines_of(run.out);
  ASSERT_EQ(out.size(), sources.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const json line = json::parse(out[i]);
    const json& c = golden["teacher_forced"][i];
    EXPECT_EQ(line["tokens"], c["tokens"]) << i;
    ASSERT_EQ(line["log_probs"].size(), c["log_probs"].size());
    for (size_t t = 0; t < c["log_probs"].size(); ++t)
      EXPECT_NEAR(line["log_probs"][t].get<double>(), c["log_probs"][t].get<double>(), 1e-4) << i << " " << t;
    EXPECT_NEAR(line["score"].get<double>(), c["score"].get<double>(),
                1e-4 * std::max(1.0, std::abs(c["score"].get<double>())));
  }
  // Without --json: one total per line, the same numbers.
  const auto plain = run_ordo("score -m " + fixture_dir("m2m100") + " --target-lang de -r " + tgt, joined(sources));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  const auto totals = lines_of(plain.out);
  ASSERT_EQ(totals.size(), out.size());
  for (size_t i = 0; i < totals.size(); ++i)
    EXPECT_DOUBLE_EQ(std::stod(totals[i]), json::parse(out[i])["score"].get<double>());
}

// What `ordo translate --json` printed, `ordo score` gives back for those translations
// (greedy): the same tokens, and the same score, but for an output cut at the length limit,
// whose </s> the search forced (log-probability 0 there; score gives the model's own).
TEST(CliScore, RoundTripOfTranslateJson) {
  const json golden = testing::load_golden("pegasus");
  TempDir dir;
  std::vector<std::string> sources;
  for (const json& s : golden["sentences"])
    if (s.get<std::string>().find('\n') == std::string::npos && !s.get<std::string>().empty())
      sources.push_back(s.get<std::string>());
  const std::string model = fixture_dir("pegasus");
  const std::string src = dir.write("src.txt", joined(sources));
  const auto translated = run_ordo("translate -q -m " + model + " -b 1 --max-length 20 --json -i " + src);
  ASSERT_EQ(translated.exit_code, 0) << translated.err;
  const auto lines = lines_of(translated.out);
  ASSERT_EQ(lines.size(), sources.size());
  std::vector<std::string> hyps;
  for (const std::string& line : lines) hyps.push_back(json::parse(line)["text"].get<std::string>());
  const auto scored =
      run_ordo("score -m " + model + " -i " + src + " -r " + dir.write("hyp.txt", joined(hyps)) + " --json");
  ASSERT_EQ(scored.exit_code, 0) << scored.err;
  const auto out = lines_of(scored.out);
  ASSERT_EQ(out.size(), hyps.size());
  int ended = 0, cut = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const json printed = json::parse(lines[i]), score = json::parse(out[i]);
    json tokens = score["tokens"];
    ASSERT_EQ(tokens.back(), "</s>");
    tokens.erase(tokens.size() - 1);
    ASSERT_EQ(tokens, printed["tokens"]) << "the text re-encodes to its tokens: " << hyps[i];
    double expected = score["score"].get<double>();
    if (printed["tokens"].size() == 19) {  // cut at max_length 20 (the start token counts)
      expected -= score["log_probs"].back().get<double>();
      ++cut;
    } else {
      ++ended;
    }
    EXPECT_NEAR(printed["score"].get<double>(), expected, 1e-4) << hyps[i];
  }
  EXPECT_GE(ended, 1);
  EXPECT_GE(cut, 1);
}

// `ordo score -m <model>` of three source lines against a targets file holding `targets`.
struct ScoreRun {
  TempDir dir;
  std::string src = dir.write("src.txt", "one\ntwo\nthree\n");
  std::string tgt;
  testing::CliRun run;
  ScoreRun(const std::string& model, const std::string& name, const std::string& targets)
      : tgt(dir.write(name, targets)), run(run_ordo("score -m " + model + " -i " + src + " -r " + tgt)) {}
};

TEST(CliScore, FewerTargetLinesAreAnErrorNamingBothFiles) {
  const ScoreRun fewer(fixture_dir("pegasus"), "t.txt", "a\nb\n");
  EXPECT_EQ(fewer.run.exit_code, 1);
  EXPECT_NE(fewer.run.err.find("t.txt has 2 lines but " + fewer.src + " has 3"), std::string::npos) << fewer.run.err;
}

TEST(CliScore, MoreTargetLinesAreAnErrorNamingBothFiles) {
  const ScoreRun more(fixture_dir("pegasus"), "u.txt", "a\nb\nc\nd\n");
  EXPECT_EQ(more.run.exit_code, 1);
  EXPECT_NE(more.run.err.find("u.txt has 4 lines but " + more.src + " has 3"), std::string::npos) << more.run.err;
}

TEST(CliScore, InvalidUtf8InTheTargetsNamesTheFileAndLine) {
  const ScoreRun bad(fixture_dir("pegasus"), "v.txt", "a\nb\xff\nc\n");
  EXPECT_EQ(bad.run.exit_code, 1);
  EXPECT_NE(bad.run.err.find("v.txt line 2"), std::string::npos) << bad.run.err;
}

TEST(CliScore, TargetsForAnFsmtModelAreAnErrorNamingTheFileAndLine) {
  const ScoreRun fsmt(fixture_dir("fsmt"), "w.txt", "a\nb\nc\n");
  EXPECT_EQ(fsmt.run.exit_code, 1);
  EXPECT_NE(fsmt.run.err.find("w.txt line 1: FSMT models take no target text"), std::string::npos) << fsmt.run.err;
}

TEST(CliScore, ScoringWithoutTargetsIsAnOptionErrorNamingTargets) {
  TempDir dir;
  const auto missing =
      run_ordo("score -m " + fixture_dir("pegasus") + " -i " + dir.write("src.txt", "one\ntwo\nthree\n"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--targets"), std::string::npos) << missing.err;
}

// Scores go out chunk by chunk (batch size x 8 pairs): a line count that differs must be
// refused before the first chunk is written, from files and from stdin alike.
TEST(CliScore, ALineCountMismatchIsRefusedBeforeAnyScoreIsWritten) {
  TempDir dir;
  const std::string model = fixture_dir("pegasus");
  std::string nineteen;
  for (int k = 0; k < 19; ++k) nineteen += "word " + std::to_string(k) + "\n";
  const std::string twenty = nineteen + "word 19\n";
  const std::string src = dir.write("src.txt", twenty), tgt = dir.write("tgt.txt", nineteen);
  const std::string output = dir.file("scores.txt");
  const auto from_file = run_ordo("score -m " + model + " --batch-size 1 -i " + src + " -r " + tgt + " -o " + output);
  EXPECT_EQ(from_file.exit_code, 1);
  EXPECT_NE(from_file.err.find(tgt + " has 19 lines but " + src + " has 20: one target line per source line"),
            std::string::npos)
      << from_file.err;
  EXPECT_FALSE(std::ifstream(output).good()) << "the output file was created";
  const auto from_stdin = run_ordo("score -m " + model + " --batch-size 1 -r " + tgt, twenty);
  EXPECT_EQ(from_stdin.exit_code, 1);
  EXPECT_EQ(from_stdin.out, "");
  EXPECT_NE(from_stdin.err.find(tgt + " has 19 lines but stdin has 20"), std::string::npos) << from_stdin.err;
}

// --target-prefix-file: line k's prefix continues input line k, as generate() does with that
// prefix (greedy and beam 4); an empty prefix line decodes as usual; an empty input line stays empty.
TEST(CliTargetPrefix, FileLinesPrefixTheirInputLines) {
  const json golden = load_interactive("marian_opus_en_mg");
  const std::string model = fixture_dir("marian_opus_en_mg");
  TempDir dir;
  for (const std::string beam : {"greedy", "beam4"}) {
    std::vector<std::string> sources, prefixes, expected;
    for (const json& c : golden["target_prefix"]) {
      if (c["case"] != beam) continue;
      sources.push_back(c["source"].get<std::string>());
      prefixes.push_back(c["prefix"].get<std::string>());
      expected.push_back(c["texts"][0].get<std::string>());
    }
    sources.insert(sources.begin() + 1, "");  // an empty input line, its prefix line unused
    prefixes.insert(prefixes.begin() + 1, "Ny");
    expected.insert(expected.begin() + 1, "");
    sources.push_back(sources[0]);  // no prefix: plain decoding
    prefixes.push_back("");
    const auto plain = run_ordo("translate -q -m " + model + " --max-length 20 -b " + (beam == "greedy" ? "1" : "4"),
                                sources[0] + "\n");
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
    expected.push_back(lines_of(plain.out).at(0));
    const auto run = run_ordo("translate -q -m " + model + " --max-length 20 -b " + (beam == "greedy" ? "1" : "4") +
                                  " --target-prefix-file " + dir.write("prefixes.txt", joined(prefixes)),
                              joined(sources));
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_EQ(lines_of(run.out), expected) << beam;
  }
}

// `ordo translate -q -m <marian> <options> --target-prefix-file <prefixes>` of `input`.
testing::CliRun translate_with_prefixes(const std::string& options, const std::string& name,
                                        const std::string& prefixes, const std::string& input) {
  TempDir dir;
  return run_ordo("translate -q -m " + fixture_dir("marian_opus_en_mg") + " " + options + " --target-prefix-file " +
                      dir.write(name, prefixes),
                  input);
}

TEST(CliTargetPrefix, FewerPrefixLinesThanInputLinesAreAnError) {
  const auto fewer = translate_with_prefixes("--max-length 3", "one.txt", "Ny\n", "a\nb\n");
  EXPECT_EQ(fewer.exit_code, 1);
  EXPECT_NE(fewer.err.find("one.txt has 1 lines, fewer than the input (stdin line 2)"), std::string::npos) << fewer.err;
}

TEST(CliTargetPrefix, MorePrefixLinesThanInputLinesAreAnError) {
  const auto more = translate_with_prefixes("--max-length 3", "three.txt", "Ny\n\nNy\n", "a\nb\n");
  EXPECT_EQ(more.exit_code, 1);
  EXPECT_NE(more.err.find("three.txt has 3 lines, more than the 2 input lines"), std::string::npos) << more.err;
}

TEST(CliTargetPrefix, PrefixesOfParagraphsAreRefused) {
  const auto paragraphs = translate_with_prefixes("--paragraphs", "p.txt", "Ny\n", "a\n");
  EXPECT_EQ(paragraphs.exit_code, 1);
  EXPECT_NE(paragraphs.err.find("--target-prefix-file works on lines translated whole"), std::string::npos)
      << paragraphs.err;
}

TEST(CliTargetPrefix, InvalidUtf8InThePrefixFileNamesTheLine) {
  const auto bad = translate_with_prefixes("", "b.txt", "Ny\n\xff\n", "a\nb\n");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("b.txt line 2"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace ordo
