// API keys of `ordo serve` (--api-keys FILE, --admin-key FILE): the file format, the one
// comparison every key lookup goes through (constant time), and LibreTranslate-style limits per
// key (requests per minute, characters per request, characters per day) with their windows.
//
// The file: one key a line, then optional NAME=VALUE fields; "#" at the start of a line or
// after a blank starts a comment ("k2 # laptop" is the key k2); a leading byte order mark is
// dropped (ordo::drop_byte_order_mark):
//   k-9f2c1e  name=laptop  req_limit=60  char_limit=5000  daily_char_limit=200000
// name: the key's id in /metrics and the access log (default: "key-" + 8 hex digits of a hash
// of the key); req_limit: requests per minute (LibreTranslate's req_limit); char_limit:
// characters per request, all texts together (LibreTranslate's char_limit); daily_char_limit:
// characters per day. 0 or absent: no limit. A line of a bare key is what the format has
// always been. No library types: unit tested alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace ordo::server {

// Whether `candidate` (what a client sent) equals `secret`, in a time that depends on the
// candidate's length only, never on where the first difference is. Every key comparison of
// the server is this function (KeyTable::find).
bool keys_equal(std::string_view candidate, std::string_view secret);

struct KeyLimits {
  int64_t requests_per_minute = 0;  // req_limit; 0: none
  int64_t chars_per_request = 0;    // char_limit; 0: none
  int64_t chars_per_day = 0;        // daily_char_limit; 0: none
  bool any() const { return requests_per_minute > 0 || chars_per_request > 0 || chars_per_day > 0; }
};

struct ApiKey {
  std::string key;
  std::string id;  // the name= field, or "key-" + a short hash: what metrics and logs show
  KeyLimits limits;
};

// The keys file's text (`path` names it in errors, with the line). Throws ordo::Error for a
// field it does not know, a bad number, a repeated key or name, or no key at all.
std::vector<ApiKey> parse_api_keys(const std::string& text, const std::string& path);
// Reads and parses the file: an error naming it when it is missing, a directory or unreadable.
std::vector<ApiKey> read_api_keys(const std::string& path);

class KeyTable {
 public:
  using Comparison = bool (*)(std::string_view candidate, std::string_view secret);
  KeyTable() = default;
  // `equal` is keys_equal; a test passes another to count the comparisons.
  explicit KeyTable(std::vector<ApiKey> keys, Comparison equal = keys_equal) : keys_(std::move(keys)), equal_(equal) {}
  bool empty() const { return keys_.empty(); }
  Comparison comparison() const { return equal_; }
  const std::vector<ApiKey>& keys() const { return keys_; }
  // The key equal to `candidate`, nullptr if none: every key is compared (keys_equal), so the
  // time does not say which key matched or how much of one did.
  const ApiKey* find(std::string_view candidate) const;

 private:
  std::vector<ApiKey> keys_;
  Comparison equal_ = keys_equal;
};

// Each key's use in its current windows: a request window (req_limit, `minute` long) and a
// character window (daily_char_limit, `day` long), each starting with the first request after
// the previous one ended. The clock is injected for tests.
class KeyLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;
  explicit KeyLimiter(
      double minute_seconds = 60, double day_seconds = 86400, Now now = [] { return Clock::now(); });

  struct Verdict {
    int status = 0;          // 0: admitted (and counted); 429 or 400 otherwise
    int retry_after = 0;     // seconds, for 429
    std::string message;     // LibreTranslate's wording
    const char* limit = "";  // "req_limit", "char_limit", "daily_char_limit"
  };
  // Admits one request of `chars` characters for `key` (counting it) or says which limit it is
  // over. Refused requests are not counted.
  Verdict admit(const ApiKey& key, int64_t chars);

  // A key's use now (its windows that ended count as empty).
  struct Usage {
    int64_t requests = 0, chars = 0;              // in the current windows
    int64_t requests_total = 0, chars_total = 0;  // since start
  };
  Usage usage(const ApiKey& key) const;

 private:
  struct State {
    Clock::time_point minute_start{}, day_start{};
    bool minute_open = false, day_open = false;
    Usage use;
  };
  void roll(State& s, Clock::time_point now) const;
  const Clock::duration minute_, day_;
  const Now now_;
  mutable std::mutex mutex_;
  mutable std::map<std::string, State> states_;  // by key id
};

}  // namespace ordo::server
