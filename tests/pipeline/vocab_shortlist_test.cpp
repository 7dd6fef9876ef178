// The vocabulary shortlist (DecodeOptions::use_vmap, the model folder's vmap.txt): off, a
// vmap.txt changes nothing; on, outputs only use the listed targets of the batch's source
// pieces (plus end and padding), and a map that covers the full path's outputs gives its ids.
// ctest-label: integration
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <set>

#include "ordo/ordo.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using testing::error_of;
using testing::fixture_dir;

const std::vector<std::string> kSentences = {"Where is the train station?", "My neighbour planted three apple trees.",
                                             "Call me before 9:30 a.m."};

DecodeOptions decoding(int beams, bool vmap) {
  DecodeOptions o;
  o.beam_size = beams;
  o.max_new_tokens = 12;
  o.return_attention = true;  // the pieces of every id (Hypothesis::id_pieces, source_tokens)
  if (vmap) o.use_vmap = true;
  return o;
}

// The fixture in a scratch folder with `vmap` as its vmap.txt.
struct ModelWithMap {
  testing::TempDir dir;
  explicit ModelWithMap(const std::string& vmap) {
    testing::copy_dir(fixture_dir("marian_opus_en_mg"), dir.path());
    dir.write("vmap.txt", vmap);
  }
};

std::vector<std::vector<int64_t>> ids_of(const std::vector<TranslationResult>& results) {
  std::vector<std::vector<int64_t>> out;
  for (const TranslationResult& r : results)
    for (const Hypothesis& h : r.hypotheses) out.push_back(h.ids);
  return out;
}

TEST(VocabShortlist, OffByDefaultEvenWithAMap) {
  const Translator plain(fixture_dir("marian_opus_en_mg"));
  const ModelWithMap folder("\t▁the\n");
  const Translator mapped(folder.dir.path());
  for (int beams : {1, 3})
    EXPECT_EQ(ids_of(mapped.translate(kSentences, decoding(beams, false))),
              ids_of(plain.translate(kSentences, decoding(beams, false))));
}

TEST(VocabShortlist, AMapThatCoversTheOutputsGivesTheFullPathsIds) {
  const Translator plain(fixture_dir("marian_opus_en_mg"));
  const auto full = plain.translate(kSentences, decoding(1, false));
  std::set<std::string> pieces;  // every piece the full path generated, and a few it did not
  for (const TranslationResult& r : full)
    for (const std::string& piece : r.hypotheses[0].id_pieces) pieces.insert(piece);
  const size_t generated = pieces.size();
  for (const std::string& extra : {"▁the", "▁train", "▁station"}) pieces.insert(extra);
  std::string always = "\t";
  for (const std::string& piece : pieces) always += piece + " ";
  const ModelWithMap folder(always + "\n");
  const Translator mapped(folder.dir.path());
  const auto listed = mapped.translate(kSentences, decoding(1, true));
  ASSERT_EQ(listed.size(), full.size());
  for (size_t i = 0; i < full.size(); ++i) {
    EXPECT_EQ(listed[i].hypotheses[0].ids, full[i].hypotheses[0].ids) << kSentences[i];
    EXPECT_EQ(listed[i].hypotheses[0].text, full[i].hypotheses[0].text);
    // Normalized over the shortlist only: never less likely than over the whole vocabulary.
    EXPECT_GE(listed[i].hypotheses[0].score, full[i].hypotheses[0].score - 1e-4);
  }
  EXPECT_GT(generated, 5u);
}

TEST(VocabShortlist, OutputsUseOnlyTheTargetsOfTheSourcePiecesFound) {
  const Translator plain(fixture_dir("marian_opus_en_mg"));
  const auto full = plain.translate({kSentences[0]}, decoding(1, false));
  const std::vector<std::string>& source = full[0].source_tokens;  // "▁Where", ..., "</s>"
  ASSERT_GE(source.size(), 3u);
  std::set<std::string> full_pieces(full[0].hypotheses[0].id_pieces.begin(), full[0].hypotheses[0].id_pieces.end());
  // Targets the full path did not choose: the shortlist must force the output onto them.
  std::vector<std::string> targets;
  for (const std::string& candidate : {"▁the", "▁train", "▁station", "▁is", "▁where", "▁a", "▁of"})
    if (!full_pieces.count(candidate)) targets.push_back(candidate);
  ASSERT_GE(targets.size(), 3u);
  std::string vmap = source[0] + "\t";
  for (const std::string& t : targets) vmap += t + " ";
  vmap += "\n" + source[1] + " " + source[2] + "\t▁apple\n";  // a bigram key
  const ModelWithMap folder(vmap);
  const Translator mapped(folder.dir.path());
  for (int beams : {1, 3}) {
    const auto listed = mapped.translate(kSentences, decoding(beams, true));
    std::set<std::string> allowed(targets.begin(), targets.end());
    allowed.insert({"▁apple", "</s>", "<pad>"});
    for (const std::string& piece : listed[0].hypotheses[0].id_pieces)
      EXPECT_TRUE(allowed.count(piece)) << "beam " << beams << ": '" << piece << "' is not on the list";
    EXPECT_NE(listed[0].hypotheses[0].ids, full[0].hypotheses[0].ids);
    // The candidates are the batch's: in batches of their own, the other sentences hold none
    // of the keys and only the end token is left to them.
    BatchOptions alone;
    alone.batch_size = 1;
    const auto apart = mapped.translate(kSentences, decoding(beams, true), alone);
    for (size_t i = 1; i < kSentences.size(); ++i)
      EXPECT_EQ(apart[i].hypotheses[0].id_pieces, std::vector<std::string>{"</s>"}) << kSentences[i];
    EXPECT_EQ(apart[0].hypotheses[0].ids, listed[0].hypotheses[0].ids);
  }
}

TEST(VocabShortlist, AMissingMapIsAnErrorNamingItsFile) {
  const Translator plain(fixture_dir("marian_opus_en_mg"));
  EXPECT_NE(error_of([&] {
              plain.translate(kSentences, decoding(1, true));
            }).find("marian_opus_en_mg/vmap.txt: file not found (use_vmap reads the model's vocabulary map"),
            std::string::npos);
}

const std::string kMapWithoutATab = "\t▁the\n▁Where ▁is\n";
const std::string kMapWithAnUnknownPiece = "\t▁the\n▁Where\t▁the no-such-piece-here\n";

TEST(VocabShortlist, AMapLineWithoutATabIsAnErrorNamingTheLine) {
  const ModelWithMap folder(kMapWithoutATab);
  const Translator mapped(folder.dir.path());
  EXPECT_NE(error_of([&] { mapped.translate(kSentences, decoding(1, true)); }).find("vmap.txt:2: no tab"),
            std::string::npos);
}

TEST(VocabShortlist, WithoutUseVmapTheMapIsNeverRead) {
  const ModelWithMap folder(kMapWithoutATab);
  const Translator mapped(folder.dir.path());
  EXPECT_EQ(mapped.translate(kSentences, decoding(1, false)).size(), kSentences.size());
}

TEST(VocabShortlist, AnUnknownTargetPieceIsAnErrorNamingIt) {
  const ModelWithMap folder(kMapWithAnUnknownPiece);
  const Translator mapped(folder.dir.path());
  EXPECT_NE(error_of([&] {
              mapped.translate(kSentences, decoding(1, true));
            }).find("vmap.txt:2: target piece 'no-such-piece-here' is not in the model's target vocabulary"),
            std::string::npos);
}

TEST(VocabShortlist, UseVmapWithAlternativesIsRefused) {
  const ModelWithMap folder(kMapWithAnUnknownPiece);
  const Translator mapped(folder.dir.path());
  DecodeOptions alternatives = decoding(1, true);
  alternatives.return_alternatives = true;
  EXPECT_NE(error_of([&] { mapped.translate(kSentences, alternatives); }).find("use_vmap with return_alternatives"),
            std::string::npos);
}

TEST(VocabShortlist, ALeadingByteOrderMarkIsNotPartOfTheFirstSourcePiece) {
  const ModelWithMap folder("\xef\xbb\xbf▁Where\t▁the\n");
  const Translator mapped(folder.dir.path());
  EXPECT_EQ(mapped.translate(kSentences, decoding(1, true)).size(), kSentences.size());
}

TEST(VocabShortlist, AnEmptyMapIsRefusedNamingTheFile) {
  const ModelWithMap folder("");
  const Translator mapped(folder.dir.path());
  EXPECT_NE(error_of([&] {
              mapped.translate(kSentences, decoding(1, true));
            }).find("/vmap.txt: the vocabulary map has no entries"),
            std::string::npos);
}

TEST(VocabShortlist, AMapOfOnlyBlankLinesIsRefusedAsEmpty) {
  const ModelWithMap folder("\n\r\n\n");
  const Translator mapped(folder.dir.path());
  EXPECT_NE(error_of([&] { mapped.translate(kSentences, decoding(1, true)); }).find("has no entries"),
            std::string::npos);
}

TEST(VocabShortlist, ADirectoryNamedVmapIsRefusedNamingIt) {
  testing::TempDir dir;
  testing::copy_dir(fixture_dir("marian_opus_en_mg"), dir.path());
  ASSERT_EQ(::mkdir(dir.file("vmap.txt").c_str(), 0755), 0);
  const Translator mapped(dir.path());
  EXPECT_NE(
      error_of([&] { mapped.translate(kSentences, decoding(1, true)); }).find("/vmap.txt: is a directory, not a file"),
      std::string::npos);
}

TEST(VocabShortlist, AFifoNamedVmapIsRefusedWithoutWaitingForAWriter) {
  testing::TempDir dir;
  testing::copy_dir(fixture_dir("marian_opus_en_mg"), dir.path());
  ASSERT_EQ(::mkfifo(dir.file("vmap.txt").c_str(), 0644), 0);
  const Translator mapped(dir.path());
  auto error = std::async(std::launch::async,
                          [&] { return error_of([&] { mapped.translate(kSentences, decoding(1, true)); }); });
  if (error.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    // Unblock the reader so that the test ends, then fail.
    const int fd = ::open(dir.file("vmap.txt").c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
    FAIL() << "reading a FIFO named vmap.txt waited for a writer";
  }
  EXPECT_NE(error.get().find("/vmap.txt: is a FIFO, not a regular file"), std::string::npos);
}

TEST(VocabShortlist, OptionErrorsComeFromResolvingTheSettingsBeforeAnyInput) {
  const ModelWithMap folder("");
  const Translator mapped(folder.dir.path());
  EXPECT_NE(error_of([&] { mapped.resolved_settings(decoding(1, true)); }).find("has no entries"), std::string::npos);
  DecodeOptions alternatives = decoding(1, true);
  alternatives.return_alternatives = true;
  EXPECT_NE(error_of([&] { mapped.resolved_settings(alternatives); }).find("use_vmap with return_alternatives"),
            std::string::npos);
}

TEST(VocabShortlist, ABatchWhoseShortlistHoldsOnlySpecialTokensIsWarnedAbout) {
  std::vector<std::string> warnings;
  ModelOptions model_options;
  model_options.on_warning = [&](const std::string& w) { warnings.push_back(w); };
  const ModelWithMap mapped_folder("▁the\t▁the\n");
  const Translator mapped(mapped_folder.dir.path(), model_options);
  mapped.translate({"Zebras yawn."}, decoding(1, true));  // no piece of it is mapped: only the specials are left
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("maps none of the pieces of a batch of 1 inputs"), std::string::npos) << warnings[0];
  warnings.clear();
  mapped.translate({"Where is the train station?"}, decoding(1, true));  // "▁the" is mapped
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

}  // namespace
}  // namespace ordo
