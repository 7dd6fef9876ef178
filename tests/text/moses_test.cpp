// The Moses port (src/text/moses.h) against sacremoses 0.1.1 itself: every line of
// tests/data/moses/inputs.json (punctuation, numbers, URLs, apostrophes, quotes, CJK, Cyrillic,
// German, control and space characters) normalized, tokenized with and without dash splitting
// and escaping, and detokenized, in English, German and Russian. The expectations were written
// by tools/codegen/moses/make_test_data.py running sacremoses 0.1.1; every case must match exactly.
// ctest-label: unit
#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "support/fixtures.h"
#include "text/moses.h"

namespace ordo::text {
namespace {

using nlohmann::json;

json load_cases() {
  const std::string path = ordo::testing::data_dir() + "/moses/sacremoses-0.1.1.json";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return json::parse(in);
}

struct Moses {
  explicit Moses(const std::string& lang) : normalizer(lang), tokenizer(lang), detokenizer(lang) {}
  MosesPunctNormalizer normalizer;
  MosesTokenizer tokenizer;
  MosesDetokenizer detokenizer;
};

std::string show(const std::vector<std::string>& tokens) {
  std::string out;
  for (const std::string& t : tokens) out += "[" + t + "]";
  return out;
}

TEST(Moses, MatchesSacremosesOnEveryLine) {
  const json data = load_cases();
  ASSERT_EQ(data["sacremoses_version"], "0.1.1");
  const json& cases = data["cases"];
  std::map<std::string, std::unique_ptr<Moses>> by_lang;
  std::map<std::string, int> checked;
  int failures = 0;
  for (const json& c : cases) {
    const std::string lang = c["lang"], input = c["input"];
    auto& moses = by_lang[lang];
    if (!moses) moses = std::make_unique<Moses>(lang);
    const auto expect_text = [&](const char* what, const std::string& actual) {
      ++checked[what];
      if (actual == c[what].get<std::string>()) return;
      ADD_FAILURE() << lang << " " << what << " of " << json(input).dump() << "\n  expected " << c[what].dump()
                    << "\n  actual   " << json(actual).dump();
      ++failures;
    };
    const auto expect_tokens = [&](const char* what, const std::vector<std::string>& actual) {
      ++checked[what];
      const auto expected = c[what].get<std::vector<std::string>>();
      if (actual == expected) return;
      ADD_FAILURE() << lang << " " << what << " of " << json(input).dump() << "\n  expected " << show(expected)
                    << "\n  actual   " << show(actual);
      ++failures;
    };
    const auto tokens = moses->tokenizer.tokenize(input, true, true);
    const auto unescaped = moses->tokenizer.tokenize(input, true, false);
    const std::string normalized = moses->normalizer.normalize(input);
    const auto pipeline = moses->tokenizer.tokenize(normalized, true, true);
    expect_text("normalized", normalized);
    expect_tokens("tokens", tokens);
    expect_tokens("tokens_plain", moses->tokenizer.tokenize(input));
    expect_tokens("tokens_unescaped", unescaped);
    expect_text("detokenized", moses->detokenizer.detokenize(c["tokens"].get<std::vector<std::string>>()));
    expect_text("detokenized_unescaped",
                moses->detokenizer.detokenize(c["tokens_unescaped"].get<std::vector<std::string>>(), false));
    expect_tokens("pipeline_tokens", pipeline);
    expect_text("pipeline_detokenized",
                moses->detokenizer.detokenize(c["pipeline_tokens"].get<std::vector<std::string>>()));
    if (failures > 40) FAIL() << "too many mismatches";
  }
  EXPECT_GE(cases.size(), 600u);
  EXPECT_EQ(by_lang.size(), 3u);
  for (const auto& [what, n] : checked) EXPECT_EQ(n, static_cast<int>(cases.size())) << what;
}

TEST(Moses, LanguagesWithoutBuiltInDataAreRefusedByName) {
  EXPECT_EQ(moses_languages(), (std::vector<std::string>{"de", "en", "ru"}));
  for (const char* lang : {"fr", "zh", ""}) {
    try {
      MosesTokenizer tokenizer(lang);
      FAIL() << "expected an error for '" << lang << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("language '" + std::string(lang) + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("de, en, ru"), std::string::npos) << e.what();
    }
    EXPECT_THROW(MosesDetokenizer{lang}, Error);
    EXPECT_THROW(MosesPunctNormalizer{lang}, Error);
  }
}

// How many of 4 threads x 50 runs of `run` differ from `expected` (a shared object used at once).
template <typename Run, typename Result>
int mismatches_across_threads(const Run& run, const Result& expected) {
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (run() != expected) ++mismatches;
    });
  for (auto& thread : threads) thread.join();
  return mismatches;
}

const std::string kMosesLine = "Mr. Smith can't pay $5,300.50 -- \"really\"... (see www.example.com).";

TEST(Moses, TheTokenizerIsSafeToShareAcrossThreads) {
  const MosesTokenizer tokenizer("en");
  const auto expected = tokenizer.tokenize(kMosesLine, true, true);
  EXPECT_EQ(mismatches_across_threads([&] { return tokenizer.tokenize(kMosesLine, true, true); }, expected), 0);
}

TEST(Moses, TheDetokenizerIsSafeToShareAcrossThreads) {
  const auto tokens = MosesTokenizer("en").tokenize(kMosesLine, true, true);
  const MosesDetokenizer detokenizer("en");
  const std::string expected = detokenizer.detokenize(tokens);
  ASSERT_FALSE(expected.empty());
  EXPECT_EQ(mismatches_across_threads([&] { return detokenizer.detokenize(tokens); }, expected), 0);
}

}  // namespace
}  // namespace ordo::text
