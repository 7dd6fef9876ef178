// Lexical constraints and glossaries against transformers 4.31 itself
// (tests/data/hf/<fixture>/interactive.json "constrained": generate(force_words_ids=..., num_beams=4,
// num_return_sequences=4) with one and two forced phrases), and the Glossary on top of them.
// ctest-label: integration
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>

#include <gtest/gtest.h>

#include "ordo/glossary.h"
#include "ordo/translator.h"
#include "pipeline/glossary_translate.h"
#include "support/cli_run.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/golden_options.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using nlohmann::json;
using testing::fixture_dir;
using testing::load_interactive;

constexpr double kTolerance = 1e-4;

std::string joined(const json& words) {
  std::string out;
  for (const json& w : words) out += (out.empty() ? "" : "|") + w.get<std::string>();
  return out;
}

void expect_error(const std::function<void()>& f, const std::string& part) {
  const std::string message = testing::error_of(f);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

class Constrained : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override { golden_ = load_interactive(GetParam()); }
  int64_t eos() const { return golden_["meta"]["eos_token_id"].get<int64_t>(); }
  json golden_;
};

// Every constrained case, the phrases as text (translate) and the sources as ids
// (translate_ids): the same four sequences, in the same order, and the same scores (null in
// the golden = -inf: a hypothesis that misses a phrase, returned to fill the n-best).
TEST_P(Constrained, ForceWordsMatchGenerate) {
  const Translator translator(fixture_dir(GetParam()));
  size_t checked = 0, two_phrases = 0;
  for (const json& c : golden_["constrained"]) {
    DecodeOptions options = testing::options_for(c["kwargs"]);
    options.force_words = joined(c["force_words"]);
    const std::string what = GetParam() + " sentence " + std::to_string(c["sentence_index"].get<int>()) +
                             " force_words '" + *options.force_words + "'";
    const auto by_text = translator.translate({c["source"].get<std::string>()}, options);
    const auto by_ids = translator.translate_ids({c["source_ids"].get<std::vector<int64_t>>()}, options);
    for (const auto* results : {&by_text, &by_ids}) {
      const auto& hyps = results->at(0).hypotheses;
      ASSERT_EQ(hyps.size(), c["sequences"].size()) << what;
      for (size_t k = 0; k < hyps.size(); ++k) {
        EXPECT_EQ(hyps[k].ids, testing::golden_generated(c["sequences"][k], eos())) << what << " hypothesis " << k;
        const json& score = c["sequences_scores"][k];
        if (score.is_null())
          EXPECT_TRUE(std::isinf(hyps[k].score) && hyps[k].score < 0)
              << what << " hypothesis " << k << ": " << hyps[k].score;
        else
          EXPECT_NEAR(hyps[k].score, score.get<double>(), kTolerance) << what << " hypothesis " << k;
      }
      EXPECT_EQ(hyps[0].text, c["texts"][0].get<std::string>()) << what;
    }
    ++checked;
    two_phrases += c["force_words"].size() == 2;
  }
  EXPECT_EQ(checked, 6u);
  EXPECT_EQ(two_phrases, 3u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, Constrained, ::testing::Values("marian_opus_en_mg", "m2m100", "pegasus"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The marian golden's options (beam 4, n-best 4, 20 new tokens) and its constrained cases.
struct MarianCase {
  json golden = load_interactive("marian_opus_en_mg");
  const json& one_phrase(int sentence) const {
    for (const json& c : golden["constrained"])
      if (c["sentence_index"] == sentence && c["force_words"].size() == 1) return c;
    throw std::runtime_error("no case");
  }
};

// A glossary term found in a sentence forces its target there (the golden's force_words
// result), whatever its case; the other sentences of the same call are translated exactly as
// without the glossary; a term absent from every source forces nothing.
TEST(Glossary, TermForcedOnlyWhereFound) {
  const MarianCase m;
  const json& c0 = m.one_phrase(0);  // "My neighbour planted three apple trees ...", forced "trano"
  const DecodeOptions options = testing::options_for(c0["kwargs"]);
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  Glossary glossary;
  glossary.add("NEIGHBOUR", "trano");
  glossary.add("railway station", "fiaran-dalamby");  // in no source below
  const std::vector<std::string> sources = {c0["source"].get<std::string>(),
                                            m.one_phrase(2)["source"].get<std::string>(),
                                            m.one_phrase(3)["source"].get<std::string>()};
  ASSERT_EQ(glossary.targets_in(sources[0]), std::vector<std::string>{"trano"});
  ASSERT_TRUE(glossary.targets_in(sources[1]).empty());
  ASSERT_TRUE(glossary.targets_in(sources[2]).empty());
  const auto with = translate_with_glossary(translator, sources, glossary, options);
  const auto without = translator.translate(sources, options);
  DecodeOptions through_options = options;  // DecodeOptions::glossary: the same through translate()
  through_options.glossary = std::make_shared<Glossary>(glossary);
  const auto through = translator.translate(sources, through_options);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(through[i].hypotheses.at(0).ids, with[i].hypotheses.at(0).ids) << i;
  ASSERT_EQ(with.size(), 3u);
  EXPECT_EQ(with[0].hypotheses.at(0).ids, testing::golden_generated(c0["sequences"][0], 0));
  EXPECT_NE(with[0].hypotheses.at(0).ids, without[0].hypotheses.at(0).ids);
  for (size_t i = 1; i < 3; ++i) {
    ASSERT_EQ(with[i].hypotheses.size(), without[i].hypotheses.size());
    for (size_t k = 0; k < with[i].hypotheses.size(); ++k) {
      EXPECT_EQ(with[i].hypotheses[k].ids, without[i].hypotheses[k].ids) << "sentence " << i << " hypothesis " << k;
      EXPECT_EQ(with[i].hypotheses[k].score, without[i].hypotheses[k].score);
    }
  }
}

TEST(Glossary, MatchesWholeWordsCaseInsensitively) {
  Glossary g;
  g.add("Vertrag", "contract");
  g.add("New York", "NYC");
  g.add("straße", "street");
  EXPECT_EQ(g.targets_in("Der VERTRAG ist gültig."), std::vector<std::string>{"contract"});
  EXPECT_TRUE(g.targets_in("Die Vertragsstrafe ist hoch.").empty());
  EXPECT_TRUE(g.targets_in("Der Mietvertrag.").empty());
  EXPECT_EQ(g.targets_in("in new york, vertrag"), (std::vector<std::string>{"contract", "NYC"}));
  EXPECT_EQ(g.targets_in("Die STRASSE ist lang."), std::vector<std::string>{"street"});  // case folding: ß = ss
  EXPECT_EQ(g.force_words_for("Vertrag", std::string("a|b")), std::optional<std::string>("a|b|contract"));
  EXPECT_EQ(g.force_words_for("nichts"), std::nullopt);
}

TEST(Glossary, BadTsvLinesAreNamed) {
  const testing::TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    const std::string path = dir.path() + "/" + name;
    std::ofstream(path) << text;
    return path;
  };
  const std::string good = write("good.tsv", "# not a comment\tx\n\nVertrag\tcontract\r\nBahnhof\t station \n");
  const Glossary g = Glossary::read_tsv(good);
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.targets_in("Am Bahnhof"), std::vector<std::string>{"station"});
  const std::string no_tab = write("no_tab.tsv", "Vertrag\tcontract\nBahnhof station\n");
  expect_error([&] { Glossary::read_tsv(no_tab); },
               no_tab + ":2: expected 'source term<TAB>target term', found no tab");
  const std::string two_tabs = write("two.tsv", "a\tb\tc\n");
  expect_error([&] { Glossary::read_tsv(two_tabs); }, two_tabs + ":1: expected");
  const std::string empty = write("empty.tsv", "\n\nVertrag\t \n");
  expect_error([&] { Glossary::read_tsv(empty); }, empty + ":3: the target term of 'Vertrag' is empty");
  const std::string bar = write("bar.tsv", "a\tb|c\n");
  expect_error([&] { Glossary::read_tsv(bar); }, bar + ":1: the target term 'b|c' contains '|'");
  const std::string bad_utf8 = write("utf8.tsv", "a\tb\n\xff\tc\n");
  expect_error([&] { Glossary::read_tsv(bad_utf8); }, bad_utf8 + ":2");
  expect_error([&] { Glossary::read_tsv(dir.path() + "/missing.tsv"); }, "missing.tsv");
}

TEST(GlossaryFiles, ALeadingByteOrderMarkIsNotPartOfTheFirstTerm) {
  const testing::TempDir dir;
  const std::string path = dir.path() + "/bom.tsv";
  std::ofstream(path) << "\xef\xbb\xbfVertrag\tcontract\n";
  EXPECT_EQ(Glossary::read_tsv(path).targets_in("Der Vertrag ist gültig."), std::vector<std::string>{"contract"});
}

TEST(GlossaryFiles, ANulByteInATermIsAnErrorNamingTheFileAndLine) {
  const testing::TempDir dir;
  const std::string source = dir.path() + "/source.tsv", target = dir.path() + "/target.tsv";
  using namespace std::string_literals;
  std::ofstream(source) << "a\tb\nVer\0trag\tcontract\n"s;
  std::ofstream(target) << "a\tb\n\nVertrag\tcon\0tract\n"s;
  expect_error([&] { Glossary::read_tsv(source); }, source + ":2: the source term contains a NUL byte");
  expect_error([&] { Glossary::read_tsv(target); }, target + ":3: the target term of 'Vertrag' contains a NUL byte");
}

TEST(ForceWords, BadOptionsAreNamed) {
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions o;
  o.beam_size = 4;
  o.force_words = "trano||x";
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words: phrase 2 is empty");
  o.force_words = " ";
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words: phrase 1 is empty");
  o.force_words = "trano";
  o.beam_size = 1;
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words needs beam search");
  o.sample = true;
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words needs beam search");
  o.sample.reset();
  o.beam_size = 4;
  o.target_prefix = "Ny";
  expect_error([&] { translator.translate({"My house."}, o); }, "force_words with a target prefix is not supported");
}

// The real binary: --glossary FILE.tsv forces a term's target in the line that has the term
// (the library's constrained result), leaves the other lines as they are without it, and a bad
// line of the file is named with its line number (exit 1); --force-words forces for every line.
TEST(GlossaryCli, TranslateWithGlossaryFile) {
  const MarianCase m;
  const json& c0 = m.one_phrase(0);
  const std::vector<std::string> sources = {c0["source"].get<std::string>(),
                                            m.one_phrase(2)["source"].get<std::string>()};
  const testing::TempDir dir;
  const std::string input = dir.write("in.txt", sources[0] + "\n" + sources[1] + "\n");
  const std::string glossary = dir.write("terms.tsv", "Neighbour\ttrano\nrailway station\tfiaran-dalamby\n");
  const std::string base = " -m '" + fixture_dir("marian_opus_en_mg") + "' --max-length 20 -i '" + input + "'";
  const std::string model = base + " -b 4";
  const testing::CliRun with = testing::run_ordo("translate" + model + " --glossary '" + glossary + "'");
  const testing::CliRun without = testing::run_ordo("translate" + model);
  ASSERT_EQ(with.exit_code, 0) << with.err;
  ASSERT_EQ(without.exit_code, 0) << without.err;
  const Translator translator(fixture_dir("marian_opus_en_mg"));
  DecodeOptions o;
  o.beam_size = 4;
  o.max_new_tokens = 20;
  o.force_words = "trano";
  const std::string forced = translator.translate({sources[0]}, o)[0].hypotheses.at(0).text;
  o.force_words.reset();
  const std::string plain = translator.translate({sources[1]}, o)[0].hypotheses.at(0).text;
  EXPECT_NE(forced.find("trano"), std::string::npos) << forced;
  EXPECT_EQ(with.out, forced + "\n" + plain + "\n");
  EXPECT_NE(with.out, without.out);
  EXPECT_EQ(without.out.substr(without.out.find('\n') + 1), plain + "\n");
  const testing::CliRun flag = testing::run_ordo("translate" + model + " --force-words trano");
  ASSERT_EQ(flag.exit_code, 0) << flag.err;
  EXPECT_EQ(flag.out.substr(0, flag.out.find('\n')), forced);

  const std::string bad = dir.write("bad.tsv", "Vertrag\tcontract\nBahnhof station\n");
  const testing::CliRun refused = testing::run_ordo("translate" + model + " --glossary '" + bad + "'");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(bad + ":2: expected 'source term<TAB>target term', found no tab"), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out, "");
  const testing::CliRun greedy = testing::run_ordo("translate" + base + " -b 1 --glossary '" + glossary + "'");
  EXPECT_NE(greedy.err.find("force_words needs beam search"), std::string::npos) << greedy.err;
}

}  // namespace
}  // namespace ordo
