// API keys (server/api_keys.h): the one constant-time comparison and the lookup that goes
// through it for every key, the keys file with its limit fields (old files read as before),
// the limits' windows with an injected clock, and the access log (server/access_log.h): request
// ids, whole lines, and a disk that cannot take a write whole.
// ctest-label: unit
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "ordo/error.h"
#include "server/access_log.h"
#include "server/api_keys.h"
#include "support/temp_dir.h"

namespace {

using namespace ordo::server;

TEST(ApiKeys, KeysEqualOnlyForTheSameBytes) {
  EXPECT_TRUE(keys_equal("k-9f2c1e", "k-9f2c1e"));
  EXPECT_FALSE(keys_equal("k-9f2c1f", "k-9f2c1e"));                    // last byte
  EXPECT_FALSE(keys_equal("x-9f2c1e", "k-9f2c1e"));                    // first byte
  EXPECT_FALSE(keys_equal("k-9f2c1", "k-9f2c1e"));                     // a prefix
  EXPECT_FALSE(keys_equal("k-9f2c1e0", "k-9f2c1e"));                   // longer
  EXPECT_FALSE(keys_equal(std::string("k-9f2c1e\0", 9), "k-9f2c1e"));  // a NUL past the end
  EXPECT_FALSE(keys_equal("", "k"));
  EXPECT_FALSE(keys_equal("", ""));  // an empty secret never matches
  EXPECT_TRUE(keys_equal(std::string(1000, 'a'), std::string(1000, 'a')));
  EXPECT_FALSE(keys_equal(std::string(999, 'a') + "b", std::string(1000, 'a')));
}

// The lookup compares the candidate with every key through the comparison it was given
// (keys_equal unless a test passes another): no early exit on a match or a mismatch.
int g_calls = 0;
bool counting_equal(std::string_view candidate, std::string_view secret) {
  ++g_calls;
  return keys_equal(candidate, secret);
}

TEST(ApiKeys, TheLookupComparesEveryKeyThroughTheOneComparison) {
  const std::vector<ApiKey> keys = parse_api_keys("alpha name=a\nbeta name=b\ngamma name=c\n", "keys.txt");
  EXPECT_EQ(KeyTable(keys).comparison(), &keys_equal);  // what the server uses
  const KeyTable table(keys, counting_equal);
  for (const std::string candidate : {"alpha", "gamma", "delta", "alph", ""}) {
    g_calls = 0;
    const ApiKey* found = table.find(candidate);
    EXPECT_EQ(g_calls, 3) << candidate;  // every key, whether or not (or where) it matched
    if (candidate == "alpha" || candidate == "gamma") {
      ASSERT_NE(found, nullptr) << candidate;
      EXPECT_EQ(found->id, candidate == "alpha" ? "a" : "c");
    } else {
      EXPECT_EQ(found, nullptr) << candidate;
    }
  }
}

// A keys file of bare keys as before (spaces and a comment around them), and one with fields.
std::vector<ApiKey> keys_of_a_mixed_file() {
  return parse_api_keys(
      "# clients\nkey-one\n  key-two  \n\nkey-three # the note is no part of it\n"
      "k-9f2c1e  name=laptop  req_limit=60 char_limit=5000\tdaily_char_limit=200000 # limits\n",
      "keys.txt");
}

TEST(ApiKeys, BareKeysAreReadAsBeforeWithoutSpacesOrComments) {
  const std::vector<ApiKey> keys = keys_of_a_mixed_file();
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].key, "key-one");
  EXPECT_EQ(keys[1].key, "key-two");
  EXPECT_EQ(keys[2].key, "key-three");
  EXPECT_FALSE(keys[0].limits.any());
}

TEST(ApiKeys, AKeyWithoutANameHasAShortHashForAnIdThatHidesTheKey) {
  const std::vector<ApiKey> keys = keys_of_a_mixed_file();
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[0].id.rfind("key-", 0), 0u);
  EXPECT_EQ(keys[0].id.size(), 12u);
  EXPECT_EQ(keys[0].id.find("one"), std::string::npos);
  EXPECT_NE(keys[0].id, keys[1].id);
}

TEST(ApiKeys, TheNameAndLimitFieldsAfterAKeyAreRead) {
  const std::vector<ApiKey> keys = keys_of_a_mixed_file();
  ASSERT_EQ(keys.size(), 4u);
  EXPECT_EQ(keys[3].key, "k-9f2c1e");
  EXPECT_EQ(keys[3].id, "laptop");
  EXPECT_EQ(keys[3].limits.requests_per_minute, 60);
  EXPECT_EQ(keys[3].limits.chars_per_request, 5000);
  EXPECT_EQ(keys[3].limits.chars_per_day, 200000);
}

TEST(ApiKeys, BadLinesAreErrorsNamingTheFileAndLine) {
  const auto error = [](const std::string& text) {
    try {
      parse_api_keys(text, "keys.txt");
    } catch (const ordo::Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("a\nb rate=3\n"),
            "keys.txt:2: unknown field 'rate=3' after the key (known: name=ID, req_limit=N, char_limit=N, "
            "daily_char_limit=N)");
  EXPECT_EQ(error("a req_limit=x\n"),
            "keys.txt:1: req_limit must be a whole number from 0 (no limit) to 2^40, not 'x'");
  EXPECT_EQ(error("a char_limit=-1\n"),
            "keys.txt:1: char_limit must be a whole number from 0 (no limit) to 2^40, not '-1'");
  EXPECT_EQ(
      error("a name=x y\n"),
      "keys.txt:1: unknown field 'y' after the key (known: name=ID, req_limit=N, char_limit=N, daily_char_limit=N)");
  EXPECT_EQ(error("a name=bad/name\n"), "keys.txt:1: name 'bad/name' must be 1-64 letters, digits, '-', '_' or '.'");
  EXPECT_EQ(error("a\nb\na\n"), "keys.txt:3: this key is already on an earlier line");
  EXPECT_EQ(error("a name=x\nb name=x\n"), "keys.txt:2: the name 'x' is already taken");
  EXPECT_EQ(error("# none\n\n"), "keys.txt: no API key in the file (one per line; # starts a comment)");
}

// A clock the test moves.
struct FakeClock {
  KeyLimiter::Clock::time_point now{std::chrono::hours(1)};
  void advance(double seconds) {
    now += std::chrono::duration_cast<KeyLimiter::Clock::duration>(std::chrono::duration<double>(seconds));
  }
};

TEST(ApiKeys, ALeadingByteOrderMarkIsNotPartOfTheFirstKey) {
  const KeyTable keys(parse_api_keys("\xef\xbb\xbfk-first name=first\nk-second\n", "keys.txt"));
  const ApiKey* first = keys.find("k-first");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->id, "first");
}

// A limiter of 1-minute and 1-day windows on a clock the test moves, and a key of 2 requests
// a minute that has used them: 10 s into the window, then 20 s, and refused 10.5 s later.
class ApiKeysPerMinute : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(limiter_.admit(key_, 10).status, 0);
    clock_.advance(20);
    ASSERT_EQ(limiter_.admit(key_, 10).status, 0);
    clock_.advance(10.5);
  }
  FakeClock clock_;
  KeyLimiter limiter_{60, 86400, [this] { return clock_.now; }};
  const ApiKey key_ = parse_api_keys("k name=alpha req_limit=2\n", "keys.txt")[0];
};

TEST_F(ApiKeysPerMinute, ARequestOverTheLimitIs429WithRetryAfter) {
  const KeyLimiter::Verdict v = limiter_.admit(key_, 10);
  EXPECT_EQ(v.status, 429);
  EXPECT_EQ(v.retry_after, 30);  // the window began 30.5 s ago: 29.5 s left, rounded up
  EXPECT_EQ(v.message, "Slowdown: 2 per 1 minute (key alpha)");
  EXPECT_STREQ(v.limit, "req_limit");
}

TEST_F(ApiKeysPerMinute, ARefusedRequestIsNotCounted) {
  ASSERT_EQ(limiter_.admit(key_, 10).status, 429);
  EXPECT_EQ(limiter_.usage(key_).requests, 2);
}

TEST_F(ApiKeysPerMinute, TheLimitHoldsUntilTheWindowEnds) {
  clock_.advance(29.4);
  EXPECT_EQ(limiter_.admit(key_, 10).status, 429);
}

TEST_F(ApiKeysPerMinute, ANewWindowAdmitsAgain) {
  ASSERT_EQ(limiter_.admit(key_, 10).status, 429);
  clock_.advance(29.6);  // 60.1 s after the window's first request: a new window
  EXPECT_EQ(limiter_.usage(key_).requests, 0);
  EXPECT_EQ(limiter_.admit(key_, 10).status, 0);
  EXPECT_EQ(limiter_.usage(key_).requests, 1);
  EXPECT_EQ(limiter_.usage(key_).requests_total, 3);
  EXPECT_EQ(limiter_.usage(key_).chars_total, 30);
}

TEST_F(ApiKeysPerMinute, AnotherKeyHasWindowsOfItsOwn) {
  const ApiKey other = parse_api_keys("o name=beta req_limit=1\n", "keys.txt")[0];
  EXPECT_EQ(limiter_.admit(other, 1).status, 0);
  EXPECT_EQ(limiter_.admit(other, 1).status, 429);
  clock_.advance(29.6);
  EXPECT_EQ(limiter_.admit(key_, 10).status, 0);
  EXPECT_EQ(limiter_.admit(other, 1).status, 429) << "the other key's window began later";
}

// A limiter on a clock the test moves, and a key of 100 characters a request and 250 a day.
class ApiKeysCharacters : public ::testing::Test {
 protected:
  FakeClock clock_;
  KeyLimiter limiter_{60, 86400, [this] { return clock_.now; }};
  const ApiKey key_ = parse_api_keys("k name=alpha char_limit=100 daily_char_limit=250\n", "keys.txt")[0];
};

TEST_F(ApiKeysCharacters, ARequestOverTheCharLimitIs400AsLibreTranslateAnswersIt) {
  const KeyLimiter::Verdict v = limiter_.admit(key_, 101);
  EXPECT_EQ(v.status, 400);
  EXPECT_EQ(v.message, "Invalid request: request (101) exceeds text limit (100)");
}

TEST_F(ApiKeysCharacters, CharactersOverTheDailyLimitAre429UntilTheDayEnds) {
  ASSERT_EQ(limiter_.admit(key_, 100).status, 0);
  clock_.advance(3600);
  ASSERT_EQ(limiter_.admit(key_, 100).status, 0);
  const KeyLimiter::Verdict v = limiter_.admit(key_, 51);
  EXPECT_EQ(v.status, 429);
  EXPECT_STREQ(v.limit, "daily_char_limit");
  EXPECT_EQ(v.retry_after, 86400 - 3600);
}

TEST_F(ApiKeysCharacters, WhatStillFitsInTheDayIsAdmitted) {
  ASSERT_EQ(limiter_.admit(key_, 100).status, 0);
  ASSERT_EQ(limiter_.admit(key_, 100).status, 0);
  ASSERT_EQ(limiter_.admit(key_, 51).status, 429);
  EXPECT_EQ(limiter_.admit(key_, 50).status, 0);
  EXPECT_EQ(limiter_.usage(key_).chars, 250);
}

TEST_F(ApiKeysCharacters, ANewDayAdmitsAgain) {
  ASSERT_EQ(limiter_.admit(key_, 100).status, 0);
  clock_.advance(3600);
  ASSERT_EQ(limiter_.admit(key_, 100).status, 0);
  clock_.advance(86400 - 3600);
  EXPECT_EQ(limiter_.usage(key_).chars, 0);
  EXPECT_EQ(limiter_.admit(key_, 100).status, 0);
}

TEST_F(ApiKeysCharacters, AKeyWithoutLimitsIsAdmittedAndCounted) {
  const ApiKey free = parse_api_keys("f\n", "keys.txt")[0];
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(limiter_.admit(free, 1000).status, 0);
  EXPECT_EQ(limiter_.usage(free).chars_total, 1000000);
}

TEST(AccessLog, RequestIdsAreTheClientsWhenSaneElseNewOnes) {
  EXPECT_EQ(request_id("abc-123_x.y:z/w+v="), "abc-123_x.y:z/w+v=");
  std::set<std::string> ids;
  for (const std::string& bad :
       std::vector<std::string>{"", "has space", "quote\"", std::string(129, 'a'), "new\nline"}) {
    const std::string id = request_id(bad);
    EXPECT_EQ(id.size(), 16u) << bad;
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
    ids.insert(id);
  }
  for (int i = 0; i < 1000; ++i) ids.insert(request_id(""));
  EXPECT_EQ(ids.size(), 1005u);  // all distinct
  const std::string time = AccessLog::now_text();
  ASSERT_EQ(time.size(), 24u) << time;
  EXPECT_EQ(time[10], 'T');
  EXPECT_EQ(time.back(), 'Z');
}

TEST(AccessLog, LinesAreWrittenWholeInOrderByTheLogsThreadAndFlushedAtTheEnd) {
  ordo::testing::TempDir dir;
  const std::string path = dir.file("access.log");
  {
    AccessLog log(path, false);
    EXPECT_FALSE(log.log_text());
    for (int i = 0; i < 500; ++i) log.write(nlohmann::ordered_json{{"id", std::to_string(i)}, {"status", 200}});
  }  // the destructor writes what is queued
  std::ifstream in(path);
  int n = 0;
  for (std::string line; std::getline(in, line); ++n) EXPECT_EQ(nlohmann::json::parse(line)["id"], std::to_string(n));
  EXPECT_EQ(n, 500);
}

TEST(AccessLog, OffWritesNothingAndDropsNothing) {
  AccessLog off("off", true);
  off.write(nlohmann::ordered_json{{"id", "x"}});
  EXPECT_EQ(off.dropped(), 0u);
}

TEST(AccessLog, AFileThatCannotBeOpenedIsAnError) {
  ordo::testing::TempDir dir;
  EXPECT_THROW(AccessLog(dir.file("no/such/dir/access.log"), false), ordo::Error);
}

// A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) stands in for a full disk: the write that
// crosses it stops part way, and every write after it fails (EFBIG), as on a full disk (ENOSPC).
// 100 lines written to a log whose file may not grow past 1000 bytes (RLIMIT_FSIZE, SIGXFSZ
// ignored): the limit falls inside a line.
class AccessLogOnAFullDisk : public ::testing::Test {
 protected:
  static nlohmann::ordered_json line(int i) {
    char id[8];
    std::snprintf(id, sizeof(id), "%03d", i);
    return nlohmann::ordered_json{{"id", id}, {"status", 200}};
  }
  static constexpr int kLines = 100;
  static constexpr rlim_t kLimit = 1000;

  void SetUp() override {
    ASSERT_NE(kLimit % line_bytes_, 0u);
    struct rlimit before {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &before), 0);
    struct sigaction ignore {
    }, previous{};
    ignore.sa_handler = SIG_IGN;
    ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &previous), 0);
    struct rlimit low = before;
    low.rlim_cur = kLimit;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &low), 0);
    {
      AccessLog log(path_, false);
      for (int i = 0; i < kLines; ++i) log.write(line(i));
      // Until the log has counted every line it could not write (its thread's counter), bounded.
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (log.unwritten() < kLines - whole_ && std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
      unwritten_ = log.unwritten();
    }
    ::setrlimit(RLIMIT_FSIZE, &before);
    ::sigaction(SIGXFSZ, &previous, nullptr);
    std::ifstream in(path_, std::ios::binary);
    text_.assign((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }

  ordo::testing::TempDir dir_;
  const std::string path_ = dir_.file("access.log");
  const size_t line_bytes_ = line(0).dump().size() + 1;
  const uint64_t whole_ = kLimit / line_bytes_;  // the lines that fit
  uint64_t unwritten_ = 0;
  std::string text_;  // the file afterwards
};

TEST_F(AccessLogOnAFullDisk, OnlyTheWholeLinesThatFitAreInTheFile) {
  EXPECT_EQ(text_.size(), whole_ * line_bytes_);
  std::istringstream lines(text_);
  uint64_t n = 0;
  for (std::string got; std::getline(lines, got); ++n) EXPECT_EQ(got, line(static_cast<int>(n)).dump());
  EXPECT_EQ(n, whole_);
}

TEST_F(AccessLogOnAFullDisk, TheLinesNotWrittenAreCounted) { EXPECT_EQ(unwritten_, kLines - whole_); }

}  // namespace
