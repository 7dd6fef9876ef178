// Decoding options that are wrong for every input (an empty force_words phrase, force_words
// without beams, a use_vmap the folder cannot serve, a target prefix that leaves no room) fail
// `ordo translate` once, before any input is translated: one error line, no output lines, a
// non-zero exit; not one error per input line beside empty output lines.
// ctest-label: integration
#include <gtest/gtest.h>

#include <string>

#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace {

using ordo::testing::CliRun;
using ordo::testing::TempDir;

const std::string kInput = "Where is the train station?\nMy neighbour planted three apple trees.\nCall me.\n";

std::string translate_args() {
  return "translate -m '" + ordo::testing::fixture_dir("marian_opus_en_mg") + "' --max-length 12 ";
}

size_t lines(const std::string& text) {
  size_t n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

// The run failed once: one error line that holds `expected`, nothing on stdout.
void expect_one_error(const CliRun& run, const std::string& expected) {
  EXPECT_NE(run.exit_code, 0);
  EXPECT_EQ(run.out, "");
  EXPECT_EQ(lines(run.err), 1u) << run.err;
  EXPECT_NE(run.err.find(expected), std::string::npos) << run.err;
}

TEST(CliOptionErrors, AnEmptyForceWordsPhraseFailsOnceBeforeAnyInput) {
  for (const char* words : {"''", "'|||'", "'Haus|'"})
    expect_one_error(ordo::testing::run_ordo(translate_args() + "--beam-size 2 --force-words " + words, kInput),
                     "force_words: phrase");
}

TEST(CliOptionErrors, ForceWordsWithoutBeamSearchFailsOnceBeforeAnyInput) {
  expect_one_error(ordo::testing::run_ordo(translate_args() + "--force-words Haus -b 1", kInput),
                   "force_words needs beam search");
}

TEST(CliOptionErrors, AMissingVocabularyMapFailsOnceBeforeAnyInput) {
  expect_one_error(ordo::testing::run_ordo(translate_args() + "--use-vmap true", kInput), "vmap.txt: file not found");
}

TEST(CliOptionErrors, AnEmptyVocabularyMapFailsOnceBeforeAnyInput) {
  TempDir dir;
  ordo::testing::copy_dir(ordo::testing::fixture_dir("marian_opus_en_mg"), dir.path());
  dir.write("vmap.txt", "");
  expect_one_error(ordo::testing::run_ordo("translate -m '" + dir.path() + "' --use-vmap true", kInput),
                   "vmap.txt: the vocabulary map has no entries");
}

TEST(CliOptionErrors, VocabularyMapWithAlternativesFailsOnceBeforeAnyInput) {
  expect_one_error(
      ordo::testing::run_ordo(translate_args() + "--use-vmap true --return-alternatives true -n 3", kInput),
      "use_vmap with return_alternatives is not supported");
}

TEST(CliOptionErrors, APrefixLineThatLeavesNoRoomFailsOnceBeforeAnyInput) {
  TempDir dir;
  std::string prefix;
  for (int i = 0; i < 600; ++i) prefix += "word ";
  const std::string file = dir.write("prefixes.txt", "\n" + prefix + "\n\n");
  expect_one_error(ordo::testing::run_ordo(translate_args() + "--target-prefix-file '" + file + "'", kInput),
                   "prefixes.txt line 2: target prefix of");
}

}  // namespace
