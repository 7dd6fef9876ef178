// Tests for tools/metrics (ordo_metrics): BLEU and chrF as sacreBLEU 2.x computes them by
// default, ROUGE-1/2/L as Google's rouge_score computes them (with and without its Porter stemmer).
// Nothing here touches LibTorch.
// ctest-label: unit
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/porter_stemmer.h"
#include "metrics/rouge.h"

using ordo::metrics::corpus_bleu;
using ordo::metrics::corpus_chrf;
using ordo::metrics::corpus_rouge;
using ordo::metrics::rouge_pair;
using ordo::metrics::rouge_tokenize;
using ordo::metrics::tokenize_13a;
using Strings = std::vector<std::string>;

namespace {
constexpr double kTol = 1e-9;
}

// ============================================================================ 13a tokenizer

// '$' and '?' are in the padded class; ',' is split because it is followed by a space (not a digit).
TEST(Bleu13aTokenizer, PunctuationIsSplitOff) {
  EXPECT_EQ(tokenize_13a("It costs $3.50, right?"), "It costs $ 3.50 , right ?");
  EXPECT_EQ(tokenize_13a("Hello, world."), "Hello , world .");
  EXPECT_EQ(tokenize_13a("e.g. U.S.A."), "e . g . U . S . A .");
}

// Period/comma between digits is kept: both neighbours are digits.
TEST(Bleu13aTokenizer, APeriodOrCommaBetweenDigitsIsKept) {
  EXPECT_EQ(tokenize_13a("1,000.5 people"), "1,000.5 people");
}

// Dash is split only when preceded by a digit; apostrophe is never split.
TEST(Bleu13aTokenizer, ADashIsSplitOnlyAfterADigit) {
  EXPECT_EQ(tokenize_13a("pages 10-20"), "pages 10 - 20");
  EXPECT_EQ(tokenize_13a("well-known it's"), "well-known it's");
}

TEST(Bleu13aTokenizer, NonOverlappingRegexSemantics) {
  // "x.5": preceded by a non-digit -> split (rule 2) although followed by a digit.
  // "5.x": followed by a non-digit -> split (rule 3). "a..": rule 2 consumes "a." and the
  // second '.' is handled by rule 3 (followed by the padding space). "3.-4": '.' split by
  // rule 3 ('-' is not a digit) and the dash is NOT split (preceded by a space by then).
  EXPECT_EQ(tokenize_13a("x.5 5.x a.. ,,a 3,a a,3"), "x . 5 5 . x a . . , , a 3 , a a , 3");
  EXPECT_EQ(tokenize_13a("caf\xC3\xA9. na\xC3\xAFve,x 3.-4"), "caf\xC3\xA9 . na\xC3\xAFve , x 3 . -4");
  EXPECT_EQ(tokenize_13a("(hi) [x] {y} @home #tag 50% a/b a+b=c \"q\""),
            "( hi ) [ x ] { y } @ home # tag 50 % a / b a + b = c \" q \"");
}

TEST(Bleu13aTokenizer, PreSteps) {
  // Unescaping is sequential, so "&amp;lt;" -> "&lt;" -> "<" exactly like Python's chained replace.
  EXPECT_EQ(tokenize_13a("&quot;Hi&quot; &amp; bye &amp;lt;"), "\" Hi \" & bye <");
  // '<skipped>' removed, "-\n" joins, remaining "\n" becomes a space.
  EXPECT_EQ(tokenize_13a("<skipped> end-\nline\nnext"), "endline next");
  // Whitespace collapses (including U+00A0, which Python's str.split() treats as space).
  EXPECT_EQ(tokenize_13a("  a \t b\xC2\xA0"
                         "c  "),
            "a b c");
  EXPECT_EQ(tokenize_13a(""), "");
}

// ============================================================================ BLEU

TEST(BleuCorpus, PerfectMatchIs100) {
  const auto b = corpus_bleu({"The cat sat on the mat."}, {{"The cat sat on the mat."}});
  EXPECT_DOUBLE_EQ(b.score, 100.0);
  EXPECT_DOUBLE_EQ(b.bp, 1.0);
  for (double p : b.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_EQ(b.sys_len, 7);  // "The cat sat on the mat ." = 7 tokens
  EXPECT_EQ(b.ref_len, 7);
}

TEST(BleuCorpus, OneSentenceWithExpSmoothedFourGrams) {
  // hyp "the cat sat on the mat"  ref "the cat is on the mat"  (6 tokens each, BP = 1)
  //  1-grams: the x2, cat, on, mat match            -> 5/6 = 83.333
  //  2-grams: the cat, on the, the mat match        -> 3/5 = 60
  //  3-grams: on the mat                            -> 1/4 = 25
  //  4-grams: none of 3 match -> exp smoothing: 100 / (2^1 * 3) = 16.667
  //  BLEU = (83.333 * 60 * 25 * 16.667)^(1/4) = 2083333.33^(1/4) = 37.99
  const auto b = corpus_bleu({"the cat sat on the mat"}, {{"the cat is on the mat"}});
  EXPECT_EQ(b.counts[0], 5);
  EXPECT_EQ(b.counts[3], 0);
  EXPECT_EQ(b.totals[3], 3);
  EXPECT_NEAR(b.precisions[0], 100.0 * 5 / 6, kTol);
  EXPECT_NEAR(b.precisions[1], 60.0, kTol);
  EXPECT_NEAR(b.precisions[2], 25.0, kTol);
  EXPECT_NEAR(b.precisions[3], 100.0 / 6, kTol);
  EXPECT_DOUBLE_EQ(b.bp, 1.0);
  EXPECT_NEAR(b.score, std::pow(100.0 * 5 / 6 * 60.0 * 25.0 * 100.0 / 6, 0.25), kTol);
  EXPECT_NEAR(b.score, 37.99178428257963, 1e-9);
}

TEST(BleuCorpus, ExpSmoothingDoublesForEachZeroOrder) {
  // hyp "a b c d e"  ref "a b x d e"  (5 tokens each, BP = 1)
  //  1-grams 4/5 = 80; 2-grams (a b, d e) 2/4 = 50
  //  3-grams 0/3 -> 100 / (2 * 3) = 16.667   (k = 1)
  //  4-grams 0/2 -> 100 / (4 * 2) = 12.5     (k = 2)
  //  BLEU = (80 * 50 * 16.667 * 12.5)^(1/4) = 833333.3^(1/4) = 30.21
  const auto b = corpus_bleu({"a b c d e"}, {{"a b x d e"}});
  EXPECT_NEAR(b.precisions[2], 100.0 / 6, kTol);
  EXPECT_NEAR(b.precisions[3], 12.5, kTol);
  EXPECT_NEAR(b.score, 30.213753973567677, 1e-9);
}

TEST(BleuCorpus, MultiReferenceClipping) {
  // Papineni et al.'s example. hyp = "the" x 7 (7 tokens).
  //  ref1 "the cat is on the mat" (the x2, 6 tokens), ref2 "there is a cat on the mat"
  //  (the x1, 7 tokens): the clip is max(2, 1) = 2 -> unigram precision 2/7 = 28.571.
  //  2-, 3-, 4-grams: 0/6, 0/5, 0/4 -> 100/(2*6) = 8.333, 100/(4*5) = 5, 100/(8*4) = 3.125
  //  closest ref length to 7 is 7 -> BP = 1
  //  BLEU = (28.571 * 8.333 * 5 * 3.125)^(1/4) = 3720.24^(1/4) = 7.81
  const auto b =
      corpus_bleu({"the the the the the the the"}, {{"the cat is on the mat"}, {"there is a cat on the mat"}});
  EXPECT_EQ(b.counts[0], 2);
  EXPECT_EQ(b.ref_len, 7);
  EXPECT_NEAR(b.precisions[0], 100.0 * 2 / 7, kTol);
  EXPECT_NEAR(b.precisions[1], 100.0 / 12, kTol);
  EXPECT_NEAR(b.precisions[2], 5.0, kTol);
  EXPECT_NEAR(b.precisions[3], 3.125, kTol);
  EXPECT_NEAR(b.score, 7.809849842300637, 1e-9);
  EXPECT_EQ(b.signature.rfind("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|version:", 0), 0u);
}

// hyp "the the cat"; ref1 "the cat", ref2 "the the dog".
//  'the' clip = max(1, 2) = 2 (ref2), 'cat' clip = 1 (ref1) -> 1-grams 3/3
//  "the the" (ref2) and "the cat" (ref1) -> 2-grams 2/2; "the the cat" -> 0/1 -> 100/2 = 50
//  no 4-grams at all: total = 0 stops the loop, precision stays 0, my_log(0) = -9999999999
//  -> BLEU = 0 although there are matches (sacreBLEU corpus behaviour, effective_order off).
//  ref lengths 2 and 3, hyp 3 -> closest 3.
auto two_reference_bleu() { return corpus_bleu({"the the cat"}, {{"the cat"}, {"the the dog"}}); }

TEST(BleuCorpus, ClippedCountsTakeTheMostOfAnyReference) {
  const auto b = two_reference_bleu();
  EXPECT_EQ(b.counts[0], 3);
  EXPECT_EQ(b.counts[1], 2);
  EXPECT_NEAR(b.precisions[2], 50.0, kTol);
}

TEST(BleuCorpus, TheReferenceLengthIsTheClosestToTheHypothesis) { EXPECT_EQ(two_reference_bleu().ref_len, 3); }

TEST(BleuCorpus, AHypothesisWithoutFourGramsScoresZeroDespiteMatches) {
  const auto b = two_reference_bleu();
  EXPECT_DOUBLE_EQ(b.precisions[3], 0.0);
  EXPECT_DOUBLE_EQ(b.score, 0.0);
}

TEST(BleuCorpus, ClosestReferenceLengthTieGoesToShorter) {
  // hyp has 5 tokens, refs 4 and 6 tokens: both 1 away -> shorter (4) -> BP = 1.
  const auto b = corpus_bleu({"a b c d e"}, {{"a b c d e f"}, {"a b c d"}});
  EXPECT_EQ(b.ref_len, 4);
  EXPECT_DOUBLE_EQ(b.bp, 1.0);
  // Same refs in the other order: still 4.
  EXPECT_EQ(corpus_bleu({"a b c d e"}, {{"a b c d"}, {"a b c d e f"}}).ref_len, 4);
}

TEST(BleuCorpus, BrevityPenalty) {
  // hyp (6 tokens) is a prefix of ref (7 tokens): all precisions 100.
  //  BP = exp(1 - 7/6) = exp(-1/6) = 0.846482; BLEU = 100 * BP = 84.648
  const auto b = corpus_bleu({"the cat sat on the mat"}, {{"the cat sat on the mat today"}});
  EXPECT_NEAR(b.bp, std::exp(1.0 - 7.0 / 6.0), kTol);
  EXPECT_NEAR(b.score, 100.0 * std::exp(-1.0 / 6.0), 1e-9);
  EXPECT_EQ(b.format(), "BLEU = 84.65 100.0/100.0/100.0/100.0 (BP = 0.846 ratio = 0.857 hyp_len = 6 ref_len = 7)");
}

TEST(BleuCorpus, SacreBleuReadmeExample) {
  // Published in sacreBLEU's README:
  //   BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)
  const Strings sys = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  const std::vector<Strings> refs = {
      {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
      {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
  const auto b = corpus_bleu(sys, refs);
  EXPECT_EQ(b.format(), "BLEU = 48.53 82.4/50.0/45.5/37.5 (BP = 0.943 ratio = 0.944 hyp_len = 17 ref_len = 18)");
  EXPECT_NEAR(b.score, 48.530827009929865, 1e-9);
}

TEST(BleuCorpus, AnEmptyOrUnmatchedHypothesisScoresZero) {
  EXPECT_DOUBLE_EQ(corpus_bleu({""}, {{"a b c"}}).score, 0.0);
  EXPECT_DOUBLE_EQ(corpus_bleu({"x y z w"}, {{"a b c d"}}).score, 0.0);  // no match at all
}

TEST(BleuCorpus, ReferencesNotOnePerHypothesisAreRefused) {
  EXPECT_THROW(corpus_bleu({"a", "b"}, {{"a"}}), std::invalid_argument);
  EXPECT_THROW(corpus_bleu({"a"}, {}), std::invalid_argument);
}

TEST(BleuSmoke, RunsWithoutTorch) {
  // ordo_metrics depends on the standard library only; this binary does not load LibTorch.
  EXPECT_GT(corpus_bleu({"hello world , this is ordo"}, {{"hello world, this is ordo"}}).score, 99.99);
}

// ============================================================================ chrF

TEST(ChrfCorpus, HandComputed) {
  // hyp "ab", ref "abc" (whitespace removed, char orders 1..6, beta 2):
  //  n=1: hyp a,b (2) ref a,b,c (3) match 2 -> P = 1, R = 2/3
  //  n=2: hyp ab (1)  ref ab,bc (2) match 1 -> P = 1, R = 1/2
  //  n=3: hyp has no 3-grams -> order skipped; n >= 4 empty on both sides
  //  avgP = 1, avgR = (2/3 + 1/2) / 2 = 7/12
  //  chrF2 = (1 + 4) * 1 * 7/12 / (4 * 1 + 7/12) = 35/55 = 7/11 -> 63.6364
  const auto c = corpus_chrf({"ab"}, {{"abc"}});
  EXPECT_NEAR(c.score, 100.0 * 7 / 11, 1e-9);
  EXPECT_EQ(c.format(), "chrF2 = 63.64");
  EXPECT_EQ(c.signature.rfind("nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:", 0), 0u);
}

TEST(ChrfCorpus, CorpusUsesSummedStatistics) {
  // Segments ("ab" vs "abc") and ("ab" vs "ab"). Summed statistics:
  //  n=1: hyp 4, ref 5, match 4; n=2: hyp 2, ref 3, match 2; n=3: hyp 0 (skipped)
  //  avgP = 1, avgR = (4/5 + 2/3) / 2 = 11/15
  //  chrF2 = 5 * 11/15 / (4 + 11/15) = 55/71 -> 77.4648 (the mean of segment scores, 81.82,
  //  would be wrong)
  EXPECT_NEAR(corpus_chrf({"ab", "ab"}, {{"abc", "ab"}}).score, 100.0 * 55 / 71, 1e-9);
}

TEST(ChrfCorpus, WhitespaceIsIgnored) {
  EXPECT_NEAR(corpus_chrf({"Hello world"}, {{"Hel lowor ld"}}).score, 100.0, 1e-12);
}

TEST(ChrfCorpus, DisjointOrEmptyTextScoresZero) {
  EXPECT_DOUBLE_EQ(corpus_chrf({"abc"}, {{"xyz"}}).score, 0.0);
  EXPECT_DOUBLE_EQ(corpus_chrf({""}, {{"xyz"}}).score, 0.0);
}

TEST(ChrfCorpus, CaseMattersByDefault) { EXPECT_LT(corpus_chrf({"ABC"}, {{"abc"}}).score, 1e-12); }

TEST(ChrfCorpus, MultiReferencePicksBestSegmentReference) {
  // Against "xyz" the segment scores 0, against "abc" 7/11 -> the latter's stats are used.
  EXPECT_NEAR(corpus_chrf({"ab"}, {{"xyz"}, {"abc"}}).score, 100.0 * 7 / 11, 1e-9);
}

TEST(ChrfCorpus, PublishedValues) {
  // sacreBLEU README: chrF2 = 59.73 on the BLEU README example.
  const Strings sys = {"The dog bit the man.", "It wasn't surprising.", "The man had just bitten him."};
  const std::vector<Strings> refs = {
      {"The dog bit the man.", "It was not unexpected.", "The man bit him first."},
      {"The dog had bit the man.", "No one was surprised.", "The man had bitten the dog."}};
  EXPECT_EQ(corpus_chrf(sys, refs).format(), "chrF2 = 59.73");
  // Hugging Face chrf metric card (sacreBLEU backend).
  EXPECT_NEAR(corpus_chrf({"The relationship between Obama and Netanyahu is not exactly friendly."},
                          {{"The ties between Obama and Netanyahu are not particularly friendly."}})
                  .score,
              61.576379378113785, 1e-9);
  EXPECT_NEAR(corpus_chrf({"The relationship between cats and dogs is not exactly friendly.",
                           "a good bookshop is just a genteel black hole that knows how to read."},
                          {{"The relationship between dogs and cats is not exactly friendly.",
                            "A good bookshop is just a genteel Black Hole that knows how to read."}})
                  .score,
              84.64214891738334, 1e-9);
}

TEST(ChrfCorpus, CountsCodePointsNotBytes) {
  // "é" is 2 bytes but one character: hyp "é" vs ref "é" is a perfect 1-gram match.
  EXPECT_NEAR(corpus_chrf({"\xC3\xA9"}, {{"\xC3\xA9"}}).score, 100.0, 1e-12);
  // "é" vs "è" share the lead byte 0xC3 but no character.
  EXPECT_DOUBLE_EQ(corpus_chrf({"\xC3\xA9"}, {{"\xC3\xA8"}}).score, 0.0);
}

// ============================================================================ ROUGE

TEST(RougeTokenizer, KeepsLowercaseAsciiWordsAndDigitsAlone) {
  // "café" loses its non-ASCII letter (rouge_score keeps only [a-z0-9]); apostrophes split.
  EXPECT_EQ(rouge_tokenize("Hello, World! It's 2024 \xE2\x80\x94 caf\xC3\xA9"),
            (Strings{"hello", "world", "it", "s", "2024", "caf"}));
  EXPECT_TRUE(rouge_tokenize(" ... ").empty());
}

TEST(RougePair, ReadmeExample) {
  // rouge_score README: target "The quick brown fox jumps over the lazy dog" (9 tokens),
  // prediction "The quick brown dog jumps on the log." (8 tokens).
  //  ROUGE-1: overlap the x2, quick, brown, dog, jumps = 6 -> P = 6/8, R = 6/9, F = 12/17 = 0.7059
  //  ROUGE-2: overlap "the quick", "quick brown" = 2 of 7 pred / 8 target bigrams
  //           -> P = 2/7, R = 1/4, F = 4/15 = 0.2667
  //  ROUGE-L: LCS "the quick brown jumps the" = 5 -> P = 5/8, R = 5/9, F = 10/17 = 0.5882
  // (The README uses use_stemmer=True; stemming changes nothing here: jumps/jumps, dog/dog.)
  const auto s = rouge_pair("The quick brown fox jumps over the lazy dog", "The quick brown dog jumps on the log.");
  EXPECT_NEAR(s.rouge1.precision, 0.75, kTol);
  EXPECT_NEAR(s.rouge1.recall, 6.0 / 9, kTol);
  EXPECT_NEAR(s.rouge1.fmeasure, 12.0 / 17, kTol);
  EXPECT_NEAR(s.rouge2.precision, 2.0 / 7, kTol);
  EXPECT_NEAR(s.rouge2.recall, 0.25, kTol);
  EXPECT_NEAR(s.rouge2.fmeasure, 4.0 / 15, kTol);
  EXPECT_NEAR(s.rougeL.precision, 0.625, kTol);
  EXPECT_NEAR(s.rougeL.recall, 5.0 / 9, kTol);
  EXPECT_NEAR(s.rougeL.fmeasure, 10.0 / 17, kTol);
}

TEST(RougePair, EmptySides) {
  const auto s = rouge_pair("a b c", "");
  EXPECT_DOUBLE_EQ(s.rouge1.fmeasure, 0.0);
  EXPECT_DOUBLE_EQ(s.rouge2.fmeasure, 0.0);
  EXPECT_DOUBLE_EQ(s.rougeL.fmeasure, 0.0);
  // One-token texts: no bigrams on either side -> ROUGE-2 = 0 even for identical text.
  const auto one = rouge_pair("word", "Word!");
  EXPECT_DOUBLE_EQ(one.rouge1.fmeasure, 1.0);
  EXPECT_DOUBLE_EQ(one.rouge2.fmeasure, 0.0);
  EXPECT_DOUBLE_EQ(one.rougeL.fmeasure, 1.0);
}

TEST(RougeCorpus, MeanOfPairScoresTimes100) {
  // Pair 1 perfect (F = 1 everywhere), pair 2 the README example.
  //  ROUGE-1 = (1 + 12/17) / 2 * 100 = 85.294; ROUGE-2 = (1 + 4/15) / 2 * 100 = 63.333;
  //  ROUGE-L = (1 + 10/17) / 2 * 100 = 79.412
  const auto r = corpus_rouge({"a b c", "The quick brown dog jumps on the log."},
                              {{"A B C", "The quick brown fox jumps over the lazy dog"}});
  EXPECT_NEAR(r.rouge1.fmeasure, (1 + 12.0 / 17) / 2 * 100, 1e-9);
  EXPECT_NEAR(r.rouge2.fmeasure, (1 + 4.0 / 15) / 2 * 100, 1e-9);
  EXPECT_NEAR(r.rougeL.fmeasure, (1 + 10.0 / 17) / 2 * 100, 1e-9);
  EXPECT_EQ(r.format(), "ROUGE-1 = 85.29, ROUGE-2 = 63.33, ROUGE-L = 79.41");
}

TEST(RougeCorpus, MultiReferenceTakesBestF) {
  // score_multi: per type the reference with the highest F. "a b" vs "x y" = 0, vs "a b" = 1.
  const auto r = corpus_rouge({"a b"}, {{"x y"}, {"a b"}});
  EXPECT_NEAR(r.rouge1.fmeasure, 100.0, 1e-12);
  EXPECT_NEAR(r.rougeL.fmeasure, 100.0, 1e-12);
  EXPECT_THROW(corpus_rouge({"a"}, {{"a", "b"}}), std::invalid_argument);
}

// NLTK's PorterStemmer() (default NLTK_EXTENSIONS mode, what rouge_score uses): the word
// list of NLTK's own stemming how-to and its documented results, plus the paper's examples
// as the NLTK mode changes or keeps them.
TEST(PorterStemmer, NltkHowtoWords) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"caresses", "caress"}, {"flies", "fli"},        {"dies", "die"},           {"mules", "mule"},
      {"denied", "deni"},     {"died", "die"},         {"agreed", "agre"},        {"owned", "own"},
      {"humbled", "humbl"},   {"sized", "size"},       {"meeting", "meet"},       {"stating", "state"},
      {"siezing", "siez"},    {"itemization", "item"}, {"sensational", "sensat"}, {"traditional", "tradit"},
      {"reference", "refer"}, {"colonizer", "colon"},  {"plotted", "plot"}};
  for (const auto& [word, stem] : cases) EXPECT_EQ(ordo::metrics::porter_stem(word), stem) << word;
}

void expect_stems(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [word, stem] : cases) EXPECT_EQ(ordo::metrics::porter_stem(word), stem) << word;
}

// Step 1: plurals, -ed, -ing and their tidying.
TEST(PorterStemmer, StepOneOfThePaperStemsPluralsAndEdAndIng) {
  expect_stems({{"ponies", "poni"},  {"ties", "tie"},          {"cats", "cat"},        {"caress", "caress"},
                {"feed", "feed"},    {"plastered", "plaster"}, {"bled", "bled"},       {"motoring", "motor"},
                {"sing", "sing"},    {"conflated", "conflat"}, {"troubled", "troubl"}, {"hopping", "hop"},
                {"tanned", "tan"},   {"falling", "fall"},      {"hissing", "hiss"},    {"fizzed", "fizz"},
                {"failing", "fail"}, {"filing", "file"},       {"happy", "happi"},     {"enjoy", "enjoy"},
                {"spied", "spi"}});
}

TEST(PorterStemmer, StepsTwoToFiveOfThePaperStemSuffixes) {
  expect_stems({{"relational", "relat"},
                {"conditional", "condit"},
                {"rational", "ration"},
                {"hopeful", "hope"},
                {"goodness", "good"},
                {"adjustment", "adjust"},
                {"dependent", "depend"},
                {"adoption", "adopt"},
                {"effective", "effect"},
                {"probate", "probat"},
                {"rate", "rate"},
                {"cease", "ceas"},
                {"controlling", "control"},
                {"roll", "roll"},
                {"generalizations", "gener"},
                {"oscillators", "oscil"}});
}

// NLTK's irregular forms, "-alli" tried first, "logi" measured before the "l", short words.
TEST(PorterStemmer, NltksExtensionsAreApplied) {
  expect_stems({{"skies", "sky"},
                {"dying", "die"},
                {"news", "news"},
                {"proceed", "proceed"},
                {"innings", "inning"},
                {"radically", "radic"},
                {"geology", "geolog"},
                {"is", "is"},
                {"abilities", "abil"}});
}

// use_stemmer=True: tokens longer than 3 characters are stemmed before matching, so
// inflected forms match; tokens of 3 characters or fewer ("was", "has") are left alone.
TEST(RougePair, StemmerMatchesInflections) {
  EXPECT_EQ(rouge_tokenize("The cats were running; flies sat.", true),
            (std::vector<std::string>{"the", "cat", "were", "run", "fli", "sat"}));
  EXPECT_EQ(rouge_tokenize("was has dies", true), (std::vector<std::string>{"was", "has", "die"}));
  // 5 tokens a side; unstemmed only "the" and "to" match.
  const auto plain = rouge_pair("the dogs ran to parks", "the dog runs to park");
  const auto stemmed = rouge_pair("the dogs ran to parks", "the dog runs to park", true);
  EXPECT_NEAR(plain.rouge1.fmeasure, 2.0 / 5, kTol);
  EXPECT_NEAR(stemmed.rouge1.fmeasure, 4.0 / 5, kTol);  // dog, park now match too; ran != run
  EXPECT_NEAR(stemmed.rouge2.fmeasure, 2.0 / 4, kTol);  // "the dog" and "to park" of 4 bigrams a side
}
