// Glossaries (ordo/glossary.h): where source terms are found, and their target terms put where
// the bundled translators' own words for them stand, the rest of each translation kept. The
// share of lines this gets right over a list of terms is tests/python/test_glossary.py's.
// ctest-label: integration
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ordo/glossary.h"
#include "ordo/translator.h"
#include "support/cli_run.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

std::string bundled_model(const std::string& name) { return std::string(ORDO_SOURCE_DIR) + "/models/" + name; }

void expect_error(const std::function<void()>& f, const std::string& part) {
  const std::string message = testing::error_of(f);
  EXPECT_NE(message.find(part), std::string::npos) << message;
}

std::shared_ptr<const Glossary> glossary_of(const std::vector<std::pair<std::string, std::string>>& terms) {
  auto g = std::make_shared<Glossary>();
  for (const auto& [source, target] : terms) g->add(source, target);
  return g;
}

// The bundled translators, loaded once for the whole file.
const Translator& en_de() {
  static const Translator translator(bundled_model("en-de"));
  return translator;
}
const Translator& de_en() {
  static const Translator translator(bundled_model("de-en"));
  return translator;
}

std::string translated(const Translator& translator, const std::string& sentence,
                       std::shared_ptr<const Glossary> glossary = nullptr, DecodeOptions options = {}) {
  options.glossary = std::move(glossary);
  return translator.translate({sentence}, options).at(0).hypotheses.at(0).text;
}

TEST(GlossaryMatches, TermsAreFoundAsWholeWordsInAnyCase) {
  Glossary g;
  g.add("Vertrag", "contract");
  g.add("New York", "NYC");
  g.add("straße", "street");
  EXPECT_EQ(g.targets_in("Der VERTRAG ist gültig."), std::vector<std::string>{"contract"});
  EXPECT_TRUE(g.targets_in("Die Vertragsstrafe ist hoch.").empty());
  EXPECT_TRUE(g.targets_in("Der Mietvertrag.").empty());
  EXPECT_EQ(g.targets_in("in new york, vertrag"), (std::vector<std::string>{"NYC", "contract"}));
  EXPECT_EQ(g.targets_in("Die STRASSE ist lang."), std::vector<std::string>{"street"});  // case folding: ß = ss
}

TEST(GlossaryMatches, EachOccurrenceIsGivenWithItsByteOffsets) {
  Glossary g;
  g.add("straße", "street");
  const std::string sentence = "Über die Straße, dann die STRASSE.";
  const std::vector<Glossary::Match> found = g.matches(sentence);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(sentence.substr(found[0].begin, found[0].end - found[0].begin), "Straße");
  EXPECT_EQ(sentence.substr(found[1].begin, found[1].end - found[1].begin), "STRASSE");
  EXPECT_EQ(found[1].target, "street");
}

TEST(GlossaryMatches, WhereTermsOverlapTheLongestWins) {
  Glossary g;
  g.add("street", "Gasse");
  g.add("street market", "Wochenmarkt");
  g.add("market", "Markt");
  const std::string sentence = "A street market on a street.";
  const std::vector<Glossary::Match> found = g.matches(sentence);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(sentence.substr(found[0].begin, found[0].end - found[0].begin), "street market");
  EXPECT_EQ(found[0].target, "Wochenmarkt");
  EXPECT_EQ(found[1].target, "Gasse");
}

TEST(GlossaryMatches, SentencesAreGroupedByWhetherTheyHoldATerm) {
  Glossary g;
  g.add("dog", "Köter");
  const std::vector<Glossary::Group> groups = g.groups({"A cat.", "A dog.", "A bird.", "Dog!"});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_FALSE(groups[0].terms);
  EXPECT_EQ(groups[0].inputs, (std::vector<size_t>{0, 2}));
  EXPECT_TRUE(groups[1].terms);
  EXPECT_EQ(groups[1].inputs, (std::vector<size_t>{1, 3}));
}

TEST(GlossaryFiles, BadLinesAreNamedWithTheFileAndLine) {
  const testing::TempDir dir;
  const std::string good = dir.write("good.tsv", "# not a comment\tx\n\nVertrag\tcontract\r\nBahnhof\t station \n");
  const Glossary g = Glossary::read_tsv(good);
  EXPECT_EQ(g.size(), 3u);
  EXPECT_EQ(g.targets_in("Am Bahnhof"), std::vector<std::string>{"station"});
  const std::string no_tab = dir.write("no_tab.tsv", "Vertrag\tcontract\nBahnhof station\n");
  expect_error([&] { Glossary::read_tsv(no_tab); },
               no_tab + ":2: expected 'source term<TAB>target term', found no tab");
  const std::string two_tabs = dir.write("two.tsv", "a\tb\tc\n");
  expect_error([&] { Glossary::read_tsv(two_tabs); }, two_tabs + ":1: expected");
  const std::string empty = dir.write("empty.tsv", "\n\nVertrag\t \n");
  expect_error([&] { Glossary::read_tsv(empty); }, empty + ":3: the target term of 'Vertrag' is empty");
  const std::string bad_utf8 = dir.write("utf8.tsv", "a\tb\n\xff\tc\n");
  expect_error([&] { Glossary::read_tsv(bad_utf8); }, bad_utf8 + ":2");
  expect_error([&] { Glossary::read_tsv(dir.path() + "/missing.tsv"); }, "missing.tsv");
}

TEST(GlossaryFiles, ALeadingByteOrderMarkIsNotPartOfTheFirstTerm) {
  const testing::TempDir dir;
  const std::string path = dir.write("bom.tsv", "\xef\xbb\xbfVertrag\tcontract\n");
  EXPECT_EQ(Glossary::read_tsv(path).targets_in("Der Vertrag ist gültig."), std::vector<std::string>{"contract"});
}

TEST(GlossaryFiles, ANulByteInATermIsAnErrorNamingTheFileAndLine) {
  const testing::TempDir dir;
  using namespace std::string_literals;
  const std::string source = dir.write("source.tsv", "a\tb\nVer\0trag\tcontract\n"s);
  const std::string target = dir.write("target.tsv", "a\tb\n\nVertrag\tcon\0tract\n"s);
  expect_error([&] { Glossary::read_tsv(source); }, source + ":2: the source term contains a NUL byte");
  expect_error([&] { Glossary::read_tsv(target); }, target + ":3: the target term of 'Vertrag' contains a NUL byte");
}

TEST(GlossaryPlacement, ATermTakesThePlaceOfTheModelsOwnWordAndNothingElseChanges) {
  const std::string sentence = "A man is riding a bicycle down the street.";
  ASSERT_EQ(translated(en_de(), sentence), "Ein Mann fährt auf einem Fahrrad die Straße entlang.");
  EXPECT_EQ(translated(en_de(), sentence, glossary_of({{"bicycle", "Velo"}})),
            "Ein Mann fährt auf einem Velo die Straße entlang.");
  EXPECT_EQ(translated(en_de(), sentence, glossary_of({{"bicycle", "Velo"}, {"street", "Gasse"}})),
            "Ein Mann fährt auf einem Velo die Gasse entlang.");
}

TEST(GlossaryPlacement, SentencesWithoutATermAreTranslatedBitForBitAsWithoutTheGlossary) {
  const std::vector<std::string> sentences = {"Two dogs play in the snow.", "A man is riding a bicycle.",
                                              "A woman in a blue dress sits on a bench.", ""};
  DecodeOptions plain;
  plain.n_best = 2;
  DecodeOptions with = plain;
  with.glossary = glossary_of({{"bicycle", "Velo"}, {"railway station", "Bahnhof"}});
  const std::vector<TranslationResult> a = en_de().translate(sentences, plain), b = en_de().translate(sentences, with);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i : {0, 2, 3}) {
    ASSERT_EQ(a[i].hypotheses.size(), b[i].hypotheses.size()) << i;
    for (size_t k = 0; k < a[i].hypotheses.size(); ++k) {
      EXPECT_EQ(a[i].hypotheses[k].ids, b[i].hypotheses[k].ids) << i;
      EXPECT_EQ(a[i].hypotheses[k].text, b[i].hypotheses[k].text) << i;
      EXPECT_EQ(a[i].hypotheses[k].score, b[i].hypotheses[k].score) << i;
      EXPECT_TRUE(b[i].hypotheses[k].attention.empty()) << i;
    }
  }
  EXPECT_NE(a[1].hypotheses[0].text, b[1].hypotheses[0].text);
}

TEST(GlossaryPlacement, EveryHypothesisOfTheNBestGetsTheTerm) {
  DecodeOptions options;
  options.n_best = 3;
  options.glossary = glossary_of({{"bicycle", "Velo"}});
  const TranslationResult r = en_de().translate({"A man is riding a bicycle."}, options).at(0);
  ASSERT_EQ(r.hypotheses.size(), 3u);
  for (const Hypothesis& h : r.hypotheses) EXPECT_NE(h.text.find("Velo"), std::string::npos) << h.text;
}

TEST(GlossaryPlacement, AMultiWordTermReplacesTheWordsOfItsTranslation) {
  EXPECT_EQ(translated(en_de(), "A girl is eating ice cream in the park.", glossary_of({{"ice cream", "Speiseeis"}})),
            "Ein Mädchen isst Speiseeis im Park.");
  EXPECT_EQ(translated(en_de(), "A man in a red shirt is climbing a rock.", glossary_of({{"red shirt", "Trikot"}})),
            "Ein Mann in einem Trikot klettert einen Felsen hoch.");
}

TEST(GlossaryPlacement, ATargetTermOfTwoWordsReplacesATranslationOfTwoWords) {
  const std::string sentence = "Wo ist der Bahnhof?";
  ASSERT_EQ(translated(de_en(), sentence), "While the train station.");
  EXPECT_EQ(translated(de_en(), sentence, glossary_of({{"Bahnhof", "railway station"}})),
            "While the railway station.");
}

TEST(GlossaryPlacement, ATermFoundTwiceIsPlacedTwice) {
  const std::string sentence = "A dog and another dog play in the snow.";
  ASSERT_EQ(translated(en_de(), sentence), "Ein Hund und ein anderer Hund spielen im Schnee.");
  EXPECT_EQ(translated(en_de(), sentence, glossary_of({{"dog", "Köter"}})),
            "Ein Köter und ein anderer Köter spielen im Schnee.");
}

TEST(GlossaryPlacement, ATermThatStartsTheTranslationIsCapitalized) {
  const std::string sentence = "Kinder spielen im Park.";
  ASSERT_EQ(translated(de_en(), sentence), "Children are playing in the park.");
  EXPECT_EQ(translated(de_en(), sentence, glossary_of({{"kinder", "kids"}})), "Kids are playing in the park.");
}

TEST(GlossaryPlacement, GreedySearchPlacesTermsToo) {
  DecodeOptions greedy;
  greedy.beam_size = 1;
  ASSERT_EQ(translated(en_de(), "A dog runs on the beach.", nullptr, greedy), "Ein Hund rennt am Strand.");
  EXPECT_EQ(translated(en_de(), "A dog runs on the beach.", glossary_of({{"dog", "Köter"}}), greedy),
            "Ein Köter rennt am Strand.");
}

TEST(GlossaryPlacement, AttentionAskedForFollowsThePlacedTokens) {
  DecodeOptions options;
  options.return_attention = true;
  options.glossary = glossary_of({{"bicycle", "Velo"}});
  const TranslationResult r = en_de().translate({"A man is riding a bicycle."}, options).at(0);
  const Hypothesis& h = r.hypotheses.at(0);
  ASSERT_NE(h.text.find("Velo"), std::string::npos) << h.text;
  EXPECT_EQ(h.attention.target_length, static_cast<int64_t>(h.ids.size()));
  EXPECT_EQ(h.attention.weights.size(), static_cast<size_t>(h.attention.layers * h.attention.heads *
                                                            h.attention.target_length * h.attention.source_length));
  EXPECT_EQ(h.id_pieces.size(), h.ids.size());
  EXPECT_EQ(h.token_positions.size(), h.tokens.size());
  EXPECT_FALSE(r.source_tokens.empty());
}

TEST(GlossaryPlacement, ASentenceWithATermStreamsOnlyItsDoneEventWithTheFinalText) {
  std::vector<TokenEvent> events;
  DecodeOptions options;
  options.beam_size = 1;
  options.glossary = glossary_of({{"bicycle", "Velo"}});
  options.on_token = [&](const TokenEvent& e) {
    events.push_back(e);
    return true;
  };
  const std::vector<TranslationResult> r =
      en_de().translate({"Two dogs play in the snow.", "A man is riding a bicycle."}, options);
  size_t plain_tokens = 0, term_events = 0;
  for (const TokenEvent& e : events) {
    if (e.input == 0) plain_tokens += !e.done;
    if (e.input != 1) continue;
    ++term_events;
    EXPECT_TRUE(e.done);
    EXPECT_EQ(e.text, r[1].hypotheses[0].text);
    EXPECT_EQ(e.delta, e.text);
  }
  EXPECT_GT(plain_tokens, 0u);
  EXPECT_EQ(term_events, 1u);
}

// The real binary: --glossary FILE.tsv gives the library's output, and a bad line of the file
// is named with its line number (exit 1, nothing written).
TEST(GlossaryCli, TranslateWithAGlossaryFileGivesTheLibrarysOutput) {
  const testing::TempDir dir;
  const std::string input = dir.write("in.txt", "A man is riding a bicycle down the street.\nTwo dogs play.\n");
  const std::string terms = dir.write("terms.tsv", "bicycle\tVelo\nstreet\tGasse\n");
  const std::string model = " -m '" + bundled_model("en-de") + "'";
  const testing::CliRun with =
      testing::run_ordo("translate" + model + " -i '" + input + "' --glossary '" + terms + "'");
  ASSERT_EQ(with.exit_code, 0) << with.err;
  EXPECT_EQ(with.out, translated(en_de(), "A man is riding a bicycle down the street.",
                                 glossary_of({{"bicycle", "Velo"}, {"street", "Gasse"}})) +
                          "\n" + translated(en_de(), "Two dogs play.") + "\n");
  const std::string bad = dir.write("bad.tsv", "Vertrag\tcontract\nBahnhof station\n");
  const testing::CliRun refused =
      testing::run_ordo("translate" + model + " -i '" + input + "' --glossary '" + bad + "'");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(bad + ":2: expected 'source term<TAB>target term', found no tab"), std::string::npos)
      << refused.err;
  EXPECT_EQ(refused.out, "");
}

}  // namespace
}  // namespace ordo
