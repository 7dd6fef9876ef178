#include "server/api_keys.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "ordo/error.h"
#include "ordo/text.h"

namespace ordo::server {

bool keys_equal(std::string_view candidate, std::string_view secret) {
  // Every byte of the candidate is compared (with a zero past the secret's end), the lengths
  // folded in: no branch on the secret's bytes, no early exit.
  volatile unsigned char diff = candidate.size() == secret.size() ? 0 : 1;
  unsigned char acc = 0;
  for (size_t i = 0; i < candidate.size(); ++i) {
    const unsigned char s = i < secret.size() ? static_cast<unsigned char>(secret[i]) : 0;
    acc |= static_cast<unsigned char>(static_cast<unsigned char>(candidate[i]) ^ s);
  }
  diff = static_cast<unsigned char>(diff | acc);
  return diff == 0 && !secret.empty();
}

const ApiKey* KeyTable::find(std::string_view candidate) const {
  const ApiKey* found = nullptr;
  for (const ApiKey& k : keys_)
    if (equal_(candidate, k.key) && !found) found = &k;  // no early exit: every key is compared
  return found;
}

namespace {

// "key-" + 8 hex digits of FNV-1a: a stable id that does not give the key away.
std::string short_id(const std::string& key) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
  char out[16];
  std::snprintf(out, sizeof(out), "key-%08x", static_cast<unsigned>(h >> 32));
  return out;
}

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
}

}  // namespace

std::vector<ApiKey> parse_api_keys(const std::string& text, const std::string& path) {
  std::vector<ApiKey> keys;
  std::set<std::string> seen_keys, seen_ids;
  std::string body = text;
  drop_byte_order_mark(body);
  std::istringstream in(body);
  size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    const std::string where = path + ":" + std::to_string(number);
    for (size_t hash = line.find('#'); hash != std::string::npos; hash = line.find('#', hash + 1))
      if (hash == 0 || line[hash - 1] == ' ' || line[hash - 1] == '\t') {
        line.erase(hash);
        break;
      }
    std::istringstream words(line);
    std::string word;
    if (!(words >> word)) continue;
    ApiKey key;
    key.key = word;
    std::string name;
    while (words >> word) {
      const size_t eq = word.find('=');
      const std::string field = eq == std::string::npos ? word : word.substr(0, eq);
      const std::string value = eq == std::string::npos ? "" : word.substr(eq + 1);
      if (field == "name") {
        if (value.empty() || value.size() > 64 || !std::all_of(value.begin(), value.end(), id_char))
          throw Error(where + ": name '" + value + "' must be 1-64 letters, digits, '-', '_' or '.'");
        name = value;
        continue;
      }
      int64_t* target = field == "req_limit"          ? &key.limits.requests_per_minute
                        : field == "char_limit"       ? &key.limits.chars_per_request
                        : field == "daily_char_limit" ? &key.limits.chars_per_day
                                                      : nullptr;
      if (!target || eq == std::string::npos)
        throw Error(where + ": unknown field '" + word +
                    "' after the key (known: name=ID, req_limit=N, char_limit=N, daily_char_limit=N)");
      size_t used = 0;
      long long n = -1;
      try {
        n = std::stoll(value, &used);
      } catch (...) {
        used = 0;
      }
      if (used != value.size() || value.empty() || n < 0 || n > (int64_t(1) << 40))
        throw Error(where + ": " + field + " must be a whole number from 0 (no limit) to 2^40, not '" + value + "'");
      *target = n;
    }
    key.id = name.empty() ? short_id(key.key) : name;
    if (!seen_keys.insert(key.key).second) throw Error(where + ": this key is already on an earlier line");
    if (!seen_ids.insert(key.id).second) throw Error(where + ": the name '" + key.id + "' is already taken");
    keys.push_back(std::move(key));
  }
  if (keys.empty()) throw Error(path + ": no API key in the file (one per line; # starts a comment)");
  return keys;
}

std::vector<ApiKey> read_api_keys(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    throw Error(path + ": cannot open the API keys file (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode)) throw Error(path + ": the API keys file is not a regular file (a directory?)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the API keys file (" + std::strerror(errno) + ")");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(path + ": cannot read the API keys file (" + std::strerror(errno) + ")");
  return parse_api_keys(text.str(), path);
}

KeyLimiter::KeyLimiter(double minute_seconds, double day_seconds, Now now)
    : minute_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(minute_seconds))),
      day_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(day_seconds))),
      now_(std::move(now)) {}

void KeyLimiter::roll(State& s, Clock::time_point now) const {
  if (s.minute_open && now >= s.minute_start + minute_) {
    s.minute_open = false;
    s.use.requests = 0;
  }
  if (s.day_open && now >= s.day_start + day_) {
    s.day_open = false;
    s.use.chars = 0;
  }
}

KeyLimiter::Verdict KeyLimiter::admit(const ApiKey& key, int64_t chars) {
  const KeyLimits& l = key.limits;
  Verdict v;
  if (l.chars_per_request > 0 && chars > l.chars_per_request) {
    // LibreTranslate's answer to a request over the key's char_limit: no retry makes it fit.
    v.status = 400;
    v.limit = "char_limit";
    v.message = "Invalid request: request (" + std::to_string(chars) + ") exceeds text limit (" +
                std::to_string(l.chars_per_request) + ")";
    return v;
  }
  if (l.chars_per_day > 0 && chars > l.chars_per_day) {
    v.status = 400;
    v.limit = "daily_char_limit";
    v.message = "Invalid request: request (" + std::to_string(chars) + ") exceeds the daily text limit (" +
                std::to_string(l.chars_per_day) + ")";
    return v;
  }
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mutex_);
  State& s = states_[key.id];
  roll(s, now);
  const auto seconds_until = [&](Clock::time_point end) {
    return std::max(1, static_cast<int>(std::ceil(std::chrono::duration<double>(end - now).count())));
  };
  if (l.requests_per_minute > 0 && s.use.requests >= l.requests_per_minute) {
    v.status = 429;
    v.limit = "req_limit";
    v.retry_after = seconds_until(s.minute_start + minute_);
    const double window = std::chrono::duration<double>(minute_).count();
    std::ostringstream per;  // LibreTranslate's "Slowdown: 60 per 1 minute"
    if (window == 60)
      per << "1 minute";
    else
      per << window << " seconds";
    v.message = "Slowdown: " + std::to_string(l.requests_per_minute) + " per " + per.str() + " (key " + key.id + ")";
    return v;
  }
  if (l.chars_per_day > 0 && s.use.chars + chars > l.chars_per_day) {
    v.status = 429;
    v.limit = "daily_char_limit";
    v.retry_after = seconds_until(s.day_start + day_);  // open: it holds characters
    v.message = "Slowdown: " + std::to_string(l.chars_per_day) + " characters per 1 day (key " + key.id + ": " +
                std::to_string(s.use.chars) + " used, this request has " + std::to_string(chars) + ")";
    return v;
  }
  if (!s.minute_open) s.minute_start = now, s.minute_open = true;
  if (!s.day_open) s.day_start = now, s.day_open = true;
  ++s.use.requests;
  ++s.use.requests_total;
  s.use.chars += chars;
  s.use.chars_total += chars;
  return v;
}

KeyLimiter::Usage KeyLimiter::usage(const ApiKey& key) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = states_.find(key.id);
  if (it == states_.end()) return {};
  roll(it->second, now_());
  return it->second.use;
}

}  // namespace ordo::server
