#include "metrics/bleu.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <unordered_map>

namespace ordo::metrics {

// ============================================================================ text helpers
namespace text {

std::u32string utf8_decode(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t i = 0;
  const std::size_t n = s.size();
  while (i < n) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      out.push_back(b0);
      ++i;
      continue;
    }
    int len = 0;
    char32_t cp = 0;
    char32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
      len = 2;
      cp = b0 & 0x1F;
      min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3;
      cp = b0 & 0x0F;
      min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4;
      cp = b0 & 0x07;
      min = 0x10000;
    }
    bool ok = len > 0 && i + static_cast<std::size_t>(len) <= n;
    for (int k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80)
        ok = false;
      else
        cp = (cp << 6) | (b & 0x3F);
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.push_back(cp);
      i += static_cast<std::size_t>(len);
    } else {
      out.push_back(b0);  // invalid byte: keep it as a single unit
      ++i;
    }
  }
  return out;
}

std::string utf8_encode(std::u32string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char32_t c : s) {
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
    } else if (c < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (c >> 6)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else if (c < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (c >> 12)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (c >> 18)));
      out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
    }
  }
  return out;
}

bool is_py_space(char32_t c) {
  if (c == ' ' || (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x1F)) return true;
  if (c < 0x80) return false;
  return c == 0x85 || c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 ||
         c == 0x202F || c == 0x205F || c == 0x3000;
}

namespace {
// Length in bytes of the Python whitespace character starting at s[i], 0 if none.
std::size_t space_len_at(std::string_view s, std::size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return is_py_space(b) ? 1 : 0;
  // All non-ASCII Python whitespace is 2 or 3 bytes long in UTF-8.
  if (b == 0xC2 && i + 1 < s.size()) {
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    return (b1 == 0x85 || b1 == 0xA0) ? 2 : 0;
  }
  if ((b == 0xE1 || b == 0xE2 || b == 0xE3) && i + 2 < s.size()) {
    const std::u32string cp = utf8_decode(s.substr(i, 3));
    return (cp.size() == 1 && is_py_space(cp[0])) ? 3 : 0;
  }
  return 0;
}
}  // namespace

std::vector<std::string> py_split(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const std::size_t n = s.size();
  std::string cur;
  bool in_word = false;
  while (i < n) {
    const std::size_t sl = space_len_at(s, i);
    if (sl > 0) {
      if (in_word) {
        out.push_back(std::move(cur));
        cur.clear();
        in_word = false;
      }
      i += sl;
    } else {
      cur.push_back(s[i]);
      in_word = true;
      ++i;
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

std::string py_rstrip(std::string_view s) {
  // Find the end of the last non-space character scanning forward (UTF-8 is not
  // self-synchronising from the back for our purposes when bytes are invalid).
  std::size_t end = 0;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t sl = space_len_at(s, i);
    if (sl > 0) {
      i += sl;
    } else {
      ++i;
      end = i;
    }
  }
  // `end` may sit inside a multi-byte character only if that character is not
  // whitespace, in which case all its bytes are non-space bytes and end covers them.
  return std::string(s.substr(0, end));
}

}  // namespace text

// ============================================================================ 13a tokenizer
namespace {

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  out.reserve(s.size());
  std::size_t pos = 0;
  while (true) {
    const std::size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out.append(s, pos, hit - pos);
    out.append(to);
    pos = hit + from.size();
  }
  if (pos == 0) return;
  out.append(s, pos, std::string::npos);
  s.swap(out);
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The character class [\{-\~\[-\` -\&\(-\+\:-\@\/] of TokenizerRegexp:
// { | } ~   [ \ ] ^ _ `   space ! " # $ % &   ( ) * +   : ; < = > ? @   /
// i.e. all ASCII punctuation except ' , - . (and no digits or letters).
bool is_13a_punct(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') || (c >= '(' && c <= '+') ||
         (c >= ':' && c <= '@') || c == '/';
}

// TokenizerRegexp.__call__: four re.sub passes (non-overlapping, left to right) then
// ' '.join(line.split()).
std::string tokenize_regexp(const std::string& line) {
  // 1. re.sub(r'([\{-\~\[-\` -\&\(-\+\:-\@\/])', r' \1 ')
  std::string a;
  a.reserve(line.size() * 2);
  for (char c : line) {
    if (is_13a_punct(c)) {
      a.push_back(' ');
      a.push_back(c);
      a.push_back(' ');
    } else {
      a.push_back(c);
    }
  }
  // 2. re.sub(r'([^0-9])([\.,])', r'\1 \2 ')   period/comma unless preceded by a digit
  std::string b;
  b.reserve(a.size() * 2);
  for (std::size_t i = 0; i < a.size();) {
    if (i + 1 < a.size() && !is_digit(a[i]) && (a[i + 1] == '.' || a[i + 1] == ',')) {
      b.push_back(a[i]);
      b.push_back(' ');
      b.push_back(a[i + 1]);
      b.push_back(' ');
      i += 2;
    } else {
      b.push_back(a[i]);
      ++i;
    }
  }
  // 3. re.sub(r'([\.,])([^0-9])', r' \1 \2')   period/comma unless followed by a digit
  std::string c;
  c.reserve(b.size() * 2);
  for (std::size_t i = 0; i < b.size();) {
    if (i + 1 < b.size() && (b[i] == '.' || b[i] == ',') && !is_digit(b[i + 1])) {
      c.push_back(' ');
      c.push_back(b[i]);
      c.push_back(' ');
      c.push_back(b[i + 1]);
      i += 2;
    } else {
      c.push_back(b[i]);
      ++i;
    }
  }
  // 4. re.sub(r'([0-9])(-)', r'\1 \2 ')   dash when preceded by a digit
  std::string d;
  d.reserve(c.size() * 2);
  for (std::size_t i = 0; i < c.size();) {
    if (i + 1 < c.size() && is_digit(c[i]) && c[i + 1] == '-') {
      d.push_back(c[i]);
      d.push_back(' ');
      d.push_back('-');
      d.push_back(' ');
      i += 2;
    } else {
      d.push_back(c[i]);
      ++i;
    }
  }
  // Byte-wise scanning is equivalent to Python's code-point scanning here: every pattern
  // element that must match a specific character is ASCII, and UTF-8 continuation/lead
  // bytes are never ASCII, so matches land on the same characters.
  std::string out;
  for (const auto& tok : text::py_split(d)) {
    if (!out.empty()) out.push_back(' ');
    out += tok;
  }
  return out;
}

using NgramCounts = std::unordered_map<std::string, std::int64_t>;

// sacreBLEU helpers.extract_all_word_ngrams(line, 1, 4): n-grams of line.split().
NgramCounts extract_ngrams(const std::vector<std::string>& tokens, int max_order) {
  NgramCounts counts;
  for (int n = 1; n <= max_order; ++n) {
    for (std::size_t i = 0; i + n <= tokens.size(); ++i) {
      std::string key;
      // Tokens contain no ASCII space (they come from split()), so ' ' is a safe separator;
      // the order prefix keeps n-grams of different orders apart.
      key.push_back(static_cast<char>('0' + n));
      for (int k = 0; k < n; ++k) {
        key.push_back(' ');
        key += tokens[i + k];
      }
      ++counts[key];
    }
  }
  return counts;
}

constexpr int kOrder = 4;
constexpr const char* kVersion = "ordo-port-of-2.x";

}  // namespace

std::string tokenize_13a(std::string_view input) {
  std::string line(input);
  replace_all(line, "<skipped>", "");
  replace_all(line, "-\n", "");
  replace_all(line, "\n", " ");
  if (line.find('&') != std::string::npos) {
    replace_all(line, "&quot;", "\"");
    replace_all(line, "&amp;", "&");
    replace_all(line, "&lt;", "<");
    replace_all(line, "&gt;", ">");
  }
  return tokenize_regexp(" " + line + " ");
}

// ============================================================================ BLEU
BleuStats& BleuStats::operator+=(const BleuStats& o) {
  sys_len += o.sys_len;
  ref_len += o.ref_len;
  for (int i = 0; i < kOrder; ++i) {
    correct[i] += o.correct[i];
    total[i] += o.total[i];
  }
  return *this;
}

BleuStats bleu_segment_stats(std::string_view hypothesis, const std::vector<std::string>& references) {
  if (references.empty()) throw std::invalid_argument("bleu: a segment needs at least one reference");
  // _extract_reference_info: max count of each n-gram over references, all ref lengths.
  NgramCounts ref_max;
  std::vector<std::int64_t> ref_lens;
  ref_lens.reserve(references.size());
  for (const auto& ref : references) {
    const auto toks = text::py_split(tokenize_13a(text::py_rstrip(ref)));
    ref_lens.push_back(static_cast<std::int64_t>(toks.size()));
    for (const auto& [ng, cnt] : extract_ngrams(toks, kOrder)) {
      auto& slot = ref_max[ng];
      if (cnt > slot) slot = cnt;
    }
  }
  const auto hyp_toks = text::py_split(tokenize_13a(text::py_rstrip(hypothesis)));
  const auto hyp_len = static_cast<std::int64_t>(hyp_toks.size());

  // _get_closest_ref_len: smallest |hyp - ref|, ties broken towards the shorter ref.
  std::int64_t closest_diff = -1, closest_len = -1;
  for (std::int64_t rl : ref_lens) {
    const std::int64_t diff = std::llabs(hyp_len - rl);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = rl;
    } else if (diff == closest_diff && rl < closest_len) {
      closest_len = rl;
    }
  }

  BleuStats st;
  st.sys_len = hyp_len;
  st.ref_len = closest_len;
  for (int n = 1; n <= kOrder; ++n) st.total[n - 1] = std::max<std::int64_t>(0, hyp_len - n + 1);
  for (const auto& [ng, cnt] : extract_ngrams(hyp_toks, kOrder)) {
    const auto it = ref_max.find(ng);
    if (it == ref_max.end()) continue;
    const int n = ng[0] - '0';
    st.correct[n - 1] += std::min(cnt, it->second);
  }
  return st;
}

static std::string make_signature(std::size_t num_refs) {
  return "nrefs:" + std::to_string(num_refs) + "|case:mixed|eff:no|tok:13a|smooth:exp|version:" + kVersion;
}

BleuScore bleu_from_stats(const BleuStats& s, std::size_t num_refs) {
  BleuScore r;
  r.counts = s.correct;
  r.totals = s.total;
  r.sys_len = s.sys_len;
  r.ref_len = s.ref_len;
  r.ratio = s.ref_len ? static_cast<double>(s.sys_len) / static_cast<double>(s.ref_len) : 0.0;
  r.signature = make_signature(num_refs);

  if (s.sys_len < s.ref_len)
    r.bp = s.sys_len > 0 ? std::exp(1.0 - static_cast<double>(s.ref_len) / static_cast<double>(s.sys_len)) : 0.0;
  else
    r.bp = 1.0;

  r.precisions.fill(0.0);
  bool any_correct = false;
  for (auto c : s.correct) any_correct = any_correct || c != 0;
  if (!any_correct) {  // sacreBLEU's early stop (#141)
    r.score = 0.0;
    return r;
  }

  double smooth_mteval = 1.0;
  for (int n = 1; n <= kOrder; ++n) {
    const double total = static_cast<double>(s.total[n - 1]);
    if (s.total[n - 1] == 0) break;
    if (s.correct[n - 1] == 0) {
      smooth_mteval *= 2;
      r.precisions[n - 1] = 100.0 / (smooth_mteval * total);
    } else {
      r.precisions[n - 1] = 100.0 * static_cast<double>(s.correct[n - 1]) / total;
    }
  }
  // my_log(0) = -9999999999 (an order with no hypothesis n-grams leaves precision 0).
  double log_sum = 0.0;
  for (double p : r.precisions) log_sum += (p == 0.0) ? -9999999999.0 : std::log(p);
  r.score = r.bp * std::exp(log_sum / kOrder);
  return r;
}

BleuScore corpus_bleu(const std::vector<std::string>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) {
  if (references.empty()) throw std::invalid_argument("bleu: no reference streams");
  for (std::size_t k = 0; k < references.size(); ++k) {
    if (references[k].size() != hypotheses.size())
      throw std::invalid_argument("bleu: reference stream " + std::to_string(k) + " has " +
                                  std::to_string(references[k].size()) + " lines, hypotheses have " +
                                  std::to_string(hypotheses.size()));
  }
  BleuStats total;
  std::vector<std::string> refs(references.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    for (std::size_t k = 0; k < references.size(); ++k) refs[k] = references[k][i];
    total += bleu_segment_stats(hypotheses[i], refs);
  }
  return bleu_from_stats(total, references.size());
}

std::string BleuScore::format() const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "BLEU = %.2f %.1f/%.1f/%.1f/%.1f (BP = %.3f ratio = %.3f hyp_len = %lld ref_len = %lld)", score,
                precisions[0], precisions[1], precisions[2], precisions[3], bp, ratio, static_cast<long long>(sys_len),
                static_cast<long long>(ref_len));
  return buf;
}

}  // namespace ordo::metrics
