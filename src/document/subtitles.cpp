// Subtitles (SubRip .srt, WebVTT .vtt). A sentence is often cut over two or three cues, and a
// model translates the halves badly, so the cue texts are joined into one stream and cut into
// sentences there; each sentence is one unit, translated whole, and its translation is shared
// out again over the cues it spanned in proportion to the source characters each had of it (cut
// at spaces, or between characters for scripts without them), then each cue is wrapped to the
// lines it had. A dialogue line ("- Who?") starts a sentence of its own. Cue tags (<i>, <b>,
// <font>, <c.x>, <v Bob>) go to the layout as spans, timestamps and {\an8} as points. Only the
// text of translated cues is rewritten: cue numbers, identifiers, timings, settings, NOTE, STYLE
// and REGION blocks, blank lines and line endings stay byte for byte.
#include <unicode/uchar.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "document/file_content.h"
#include "document/markup_fragment.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

// A sentence cut over more cues than this is shared out in pieces of this many cues (a song's
// lines without any full stop would otherwise be one "sentence").
constexpr size_t kMaxCuesPerSentence = 4;
constexpr size_t kMaxNesting = 32;

bool space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f'; }

// Length of the valid UTF-8 character at s[i], 0 when it is not one.
size_t utf8_length(const std::string& s, size_t i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char d = static_cast<unsigned char>(s[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (d & 0x3F);
  }
  if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF))
    return 0;
  return n;
}

uint32_t code_point(const std::string& s, size_t i, size_t n) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  uint32_t cp = n == 1 ? c : c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  return cp;
}

size_t code_points(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

bool has_alnum(const std::string& s, size_t begin, size_t end) {
  for (size_t i = begin; i < end;) {
    size_t n = utf8_length(s, i);
    if (n == 0) n = 1;
    if (u_isalnum(static_cast<UChar32>(code_point(s, i, n)))) return true;
    i += n;
  }
  return false;
}

struct Line {
  size_t begin = 0, end = 0, next = 0;  // content [begin, end), line ending [end, next)
  bool blank(const std::string& s) const {
    for (size_t i = begin; i < end; ++i)
      if (!space(s[i])) return false;
    return true;
  }
};

// A piece of cue text: visible text (entities decoded for WebVTT) or a tag.
struct Item {
  enum Kind { kText, kOpen, kClose, kPoint } kind = kText;
  std::string text;
  int tag = -1;
};

// The source of a tag, by id: a span's opening and closing tags, or a point's own text.
struct TagText {
  std::string open, close, name;
};

struct SourceLine {
  std::vector<Item> items;
  std::string dash;  // "- " of a dialogue line (taken out of the items)
};

struct Group {
  std::string prefix;  // the dialogue dash of its first line
  size_t lines = 0;
  std::vector<SourceLine> source;
  // What the group is written from: text and tags outside sentences, and kUnit tokens where
  // a part of a unit goes.
  struct Token {
    enum Kind { kText, kOpen, kClose, kPoint, kUnit } kind = kText;
    std::string text;
    int id = -1;  // tag id or unit
    size_t part = 0;
  };
  std::vector<Token> tokens;
};

struct Cue {
  size_t text_begin = 0, text_end = 0;  // the bytes of the text lines (without the last line ending)
  std::string eol;
  std::vector<Group> groups;
};

using Token = Group::Token;

struct UnitParts {
  std::vector<size_t> weights;  // source code points the unit had in each group it spans
};

// ---------------------------------------------------------------- reading

class Reader {
 public:
  Reader(const std::string& bytes, bool vtt) : s_(bytes), vtt_(vtt), what_(vtt ? "WebVTT file" : "SRT file") {}

  [[noreturn]] void fail(size_t line, const std::string& message) const {
    throw Error(what_ + ": line " + std::to_string(line + 1) + ": " + message);
  }

  void split_lines() {
    size_t i = s_.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
    while (i < s_.size()) {
      Line line;
      line.begin = i;
      while (i < s_.size() && s_[i] != '\n' && s_[i] != '\r') {
        const size_t n = utf8_length(s_, i);
        if (n == 0) fail(lines_.size(), "not UTF-8 text (convert the file to UTF-8)");
        i += n;
      }
      line.end = i;
      if (i < s_.size() && s_[i] == '\r') ++i;
      if (i < s_.size() && s_[i] == '\n') ++i;
      line.next = i;
      lines_.push_back(line);
    }
  }

  // A time: SRT "00:00:01,000" (hours of any width, '.' tolerated), WebVTT "00:01.000" or
  // "00:00:01.000".
  bool time(const std::string& t, size_t& i) const {
    std::vector<size_t> fields;
    for (;;) {
      size_t digits = 0, value = 0;
      while (i < t.size() && t[i] >= '0' && t[i] <= '9' && digits < 10) value = value * 10 + (t[i++] - '0'), ++digits;
      if (digits == 0) return false;
      fields.push_back(value);
      if (i < t.size() && t[i] == ':' && fields.size() < 3) {
        ++i;
        continue;
      }
      break;
    }
    if (fields.size() < (vtt_ ? 2u : 3u)) return false;
    if (fields[fields.size() - 1] > 59 || fields[fields.size() - 2] > 59) return false;
    if (i >= t.size() || !(t[i] == '.' || (!vtt_ && t[i] == ','))) return false;
    ++i;
    size_t digits = 0;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i, ++digits;
    return vtt_ ? digits == 3 : digits >= 1 && digits <= 3;
  }

  bool timing(const Line& line) const {
    const std::string t = s_.substr(line.begin, line.end - line.begin);
    size_t i = 0;
    while (i < t.size() && space(t[i])) ++i;
    if (!time(t, i)) return false;
    while (i < t.size() && space(t[i])) ++i;
    if (t.compare(i, 3, "-->") != 0) return false;
    i += 3;
    while (i < t.size() && space(t[i])) ++i;
    if (!time(t, i)) return false;
    // WebVTT: cue settings after white space; SubRip: anything (X1:... coordinates).
    return !vtt_ || i == t.size() || space(t[i]);
  }

  bool has_arrow(const Line& line) const {
    return s_.substr(line.begin, line.end - line.begin).find("-->") != std::string::npos;
  }

  bool digits_only(const Line& line) const {
    size_t b = line.begin, e = line.end;
    while (b < e && space(s_[b])) ++b;
    while (e > b && space(s_[e - 1])) --e;
    if (b == e) return false;
    for (size_t i = b; i < e; ++i)
      if (s_[i] < '0' || s_[i] > '9') return false;
    return true;
  }

  void check_timing(size_t line) const {
    if (!timing(lines_[line]))
      fail(line, vtt_ ? "the timing line does not parse (expected 00:01.000 --> 00:02.000 and settings)"
                      : "the timing line does not parse (expected 00:00:01,000 --> 00:00:02,500)");
  }

  // Blocks of non-blank lines; each cue is added with its text lines.
  void read_cues() {
    size_t i = 0;
    if (vtt_) {
      const std::string first =
          lines_.empty() ? std::string() : s_.substr(lines_[0].begin, lines_[0].end - lines_[0].begin);
      if (first.compare(0, 6, "WEBVTT") != 0 || (first.size() > 6 && first[6] != ' ' && first[6] != '\t'))
        fail(0, "does not start with WEBVTT: not a WebVTT file");
      while (i < lines_.size() && !lines_[i].blank(s_)) ++i;  // the header block
    }
    while (i < lines_.size()) {
      if (lines_[i].blank(s_)) {
        ++i;
        continue;
      }
      size_t end = i;
      while (end < lines_.size() && !lines_[end].blank(s_)) ++end;
      vtt_ ? vtt_block(i, end) : srt_block(i, end);
      i = end;
    }
    if (cues_.empty()) throw Error(what_ + ": no subtitle cue found: not " + (vtt_ ? "a WebVTT" : "an SRT") + " file");
  }

  void srt_block(size_t begin, size_t end) {
    while (begin < end) {
      size_t timing_line;
      if (digits_only(lines_[begin])) {
        if (begin + 1 >= end) fail(begin, "a cue number without a timing line after it");
        timing_line = begin + 1;
      } else if (has_arrow(lines_[begin])) {
        timing_line = begin;
      } else {
        if (cues_.empty()) fail(begin, "expected a cue number or a timing line: not an SRT file");
        return;  // a paragraph outside any cue: kept as it is
      }
      check_timing(timing_line);
      // A cue without the blank line after it: the next number and timing start a new cue.
      size_t text_end = timing_line + 1;
      while (text_end < end && !(text_end + 1 < end && digits_only(lines_[text_end]) && timing(lines_[text_end + 1])))
        ++text_end;
      add_cue(timing_line + 1, text_end);
      begin = text_end;
    }
  }

  void vtt_block(size_t begin, size_t end) {
    const std::string first = s_.substr(lines_[begin].begin, lines_[begin].end - lines_[begin].begin);
    for (const char* keyword : {"NOTE", "STYLE", "REGION"}) {
      const size_t n = std::char_traits<char>::length(keyword);
      if (first.compare(0, n, keyword) == 0 && (first.size() == n || first[n] == ' ' || first[n] == '\t')) return;
    }
    size_t timing_line;
    if (has_arrow(lines_[begin]))
      timing_line = begin;
    else if (begin + 1 < end && has_arrow(lines_[begin + 1]))
      timing_line = begin + 1;
    else
      return;  // not a cue: kept as it is
    check_timing(timing_line);
    add_cue(timing_line + 1, end);
  }

  // Cue text: tags and, for WebVTT, character references.
  std::vector<Item> parse_text(size_t begin, size_t end) {
    std::vector<Item> items;
    const auto add_text = [&](const std::string& text) {
      if (!items.empty() && items.back().kind == Item::kText)
        items.back().text += text;
      else
        items.push_back({Item::kText, text, -1});
    };
    // The next '>', '<' and '}' of the line, found once each however many '<' there are.
    size_t next_gt = begin, next_lt = begin, next_brace = begin;
    const auto next = [&](size_t& cursor, size_t from, char c) {
      if (cursor < from) cursor = from;
      while (cursor < end && s_[cursor] != c) ++cursor;
      return cursor < end ? cursor : std::string::npos;
    };
    size_t i = begin;
    while (i < end) {
      const char c = s_[i];
      if (c == '<') {
        const size_t close = next(next_gt, i, '>');
        const bool closing = i + 1 < end && s_[i + 1] == '/';
        const size_t name_at = i + 1 + closing;
        const bool looks = close != std::string::npos && close < end && name_at < close &&
                           (std::isalpha(static_cast<unsigned char>(s_[name_at])) ||
                            (vtt_ && !closing && std::isdigit(static_cast<unsigned char>(s_[name_at]))));
        if (looks && next(next_lt, i + 1, '<') > close) {
          const std::string tag = s_.substr(i, close + 1 - i);
          size_t name_end = name_at;
          while (name_end < close && std::isalnum(static_cast<unsigned char>(s_[name_end]))) ++name_end;
          std::string name = s_.substr(name_at, name_end - name_at);
          for (char& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          add_tag(items, tag, name, closing, std::isdigit(static_cast<unsigned char>(s_[name_at])) != 0);
          i = close + 1;
          continue;
        }
      } else if (c == '{' && i + 1 < end && s_[i + 1] == '\\') {  // {\an8}, {\i1}: SubStation overrides
        const size_t close = next(next_brace, i, '}');
        if (close != std::string::npos && close < end) {
          add_tag(items, s_.substr(i, close + 1 - i), "", false, true);
          i = close + 1;
          continue;
        }
      } else if (c == '&' && vtt_) {
        static const std::pair<const char*, const char*> kEntities[] = {
            {"&amp;", "&"},           {"&lt;", "<"}, {"&gt;", ">"}, {"&nbsp;", "\xC2\xA0"}, {"&lrm;", "\xE2\x80\x8E"},
            {"&rlm;", "\xE2\x80\x8F"}};
        bool matched = false;
        for (const auto& [entity, value] : kEntities) {
          const size_t n = std::char_traits<char>::length(entity);
          if (i + n <= end && s_.compare(i, n, entity) == 0) {
            add_text(value);
            i += n;
            matched = true;
            break;
          }
        }
        if (matched) continue;
      }
      add_text(std::string(1, c));
      ++i;
    }
    return items;
  }

  void add_tag(std::vector<Item>& items, const std::string& tag, const std::string& name, bool closing, bool point) {
    // Spans nested deeper than any real cue are kept as points (every stack stays short).
    if (point || name == "br" || (!closing && open_.size() >= kMaxNesting)) {
      tags_.push_back({tag, "", ""});
      items.push_back({Item::kPoint, "", static_cast<int>(tags_.size() - 1)});
      return;
    }
    if (!closing) {
      tags_.push_back({tag, "</" + name + ">", name});
      open_.push_back(static_cast<int>(tags_.size() - 1));
      items.push_back({Item::kOpen, "", open_.back()});
      return;
    }
    // A closing tag closes the innermost open span of its name (</c> closes <c.yellow>).
    for (size_t k = open_.size(); k-- > 0;) {
      if (tags_[open_[k]].name == name) {
        tags_[open_[k]].close = tag;
        items.push_back({Item::kClose, "", open_[k]});
        open_.resize(k);
        return;
      }
    }
    tags_.push_back({tag, "", ""});
    items.push_back({Item::kPoint, "", static_cast<int>(tags_.size() - 1)});
  }

  void add_cue(size_t first, size_t end) {
    if (first >= end) return;  // a cue without text
    Cue cue;
    cue.text_begin = lines_[first].begin;
    cue.text_end = lines_[end - 1].end;
    cue.eol = s_.substr(lines_[first].end, lines_[first].next - lines_[first].end);
    if (cue.eol.empty()) cue.eol = "\n";
    open_.clear();  // a cue's spans end with it
    for (size_t l = first; l < end; ++l) {
      SourceLine line;
      line.items = parse_text(lines_[l].begin, lines_[l].end);
      // A dialogue line: "- " (or "-Text") at the start of its visible text.
      for (Item& item : line.items) {
        if (item.kind != Item::kText) continue;
        const std::string& t = item.text;
        // "-", or an en or em dash followed by a space.
        size_t n = 0;
        if (t.size() >= 2 && t[0] == '-' && t[1] != '-') n = 1;
        for (const char* dash : {"\xE2\x80\x93 ", "\xE2\x80\x94 "})
          if (t.compare(0, 4, dash) == 0) n = 3;
        if (n > 0) {
          while (n < t.size() && (t[n] == ' ' || t[n] == '\t')) ++n;
          line.dash = t.substr(0, n);
          item.text.erase(0, n);
        }
        break;
      }
      if (cue.groups.empty() || !line.dash.empty()) {
        cue.groups.emplace_back();
        cue.groups.back().prefix = line.dash;
      }
      cue.groups.back().lines++;
      cue.groups.back().source.push_back(std::move(line));
    }
    cues_.push_back(std::move(cue));
  }

  const std::string& s_;
  bool vtt_;
  std::string what_;
  std::vector<Line> lines_;
  std::vector<int> open_;

 public:
  std::vector<Cue> cues_;
  std::vector<TagText> tags_;
};

// ---------------------------------------------------------------- sentences over cues

// The cue texts joined, as split_sentences sees them, with where each piece came from.
struct Segment {
  struct Elem {
    enum Kind { kText, kJoin, kOpen, kClose, kPoint } kind = kText;
    size_t begin = 0, end = 0;  // stream bytes (kText, kJoin); kOpen/kClose/kPoint: at begin
    int tag = -1;
    size_t cue = 0, group = 0;
  };
  std::string stream;
  std::vector<Elem> elems;
};

class SubtitleContent : public FileContent {
 public:
  SubtitleContent(const std::string& bytes, bool vtt, const FileOptions& options) : source_(bytes), vtt_(vtt) {
    Reader reader(bytes, vtt);
    reader.split_lines();
    reader.read_cues();
    cues_ = std::move(reader.cues_);
    tags_ = std::move(reader.tags_);
    Segment segment;
    for (size_t c = 0; c < cues_.size(); ++c) {
      for (size_t g = 0; g < cues_[c].groups.size(); ++g) {
        Group& group = cues_[c].groups[g];
        if (!group.prefix.empty()) flush(segment, options);
        for (const SourceLine& line : group.source) {
          if (!segment.stream.empty()) {
            segment.elems.push_back({Segment::Elem::kJoin, segment.stream.size(), segment.stream.size() + 1, -1, c, g});
            segment.stream += ' ';
          }
          for (const Item& item : line.items) {
            Segment::Elem e;
            e.cue = c, e.group = g, e.tag = item.tag;
            e.begin = e.end = segment.stream.size();
            if (item.kind == Item::kText) {
              e.kind = Segment::Elem::kText;
              for (char ch : item.text) segment.stream += (ch == '\t' ? ' ' : ch);
              e.end = segment.stream.size();
            } else {
              e.kind = item.kind == Item::kOpen    ? Segment::Elem::kOpen
                       : item.kind == Item::kClose ? Segment::Elem::kClose
                                                   : Segment::Elem::kPoint;
            }
            segment.elems.push_back(e);
          }
        }
      }
    }
    flush(segment, options);
    if (units.size() > options.limits.max_texts)
      throw Error(std::string(vtt ? "WebVTT file" : "SRT file") + ": more than " +
                  std::to_string(options.limits.max_texts) + " sentences (limit max_texts)");
  }

  std::string rebuild(const std::vector<std::string>& translated) const override;

 private:
  // Cuts a segment into sentences, makes a unit of each and the groups' tokens.
  void flush(Segment& segment, const FileOptions& options) {
    if (segment.elems.empty()) return;
    const std::string& s = segment.stream;
    std::vector<SentenceSpan> sentences;
    size_t scan = 0;  // first text element not wholly before the span
    for (const SentenceSpan& span : split_sentences(s, options.source_language)) {
      if (!has_alnum(s, span.begin, span.end)) continue;
      // A "sentence" over too many cues is cut at cue boundaries.
      while (scan < segment.elems.size() && segment.elems[scan].end <= span.begin) ++scan;
      size_t begin = span.begin, cues = 0, last_cue = SIZE_MAX;
      for (size_t i = scan; i < segment.elems.size() && segment.elems[i].begin < span.end; ++i) {
        const Segment::Elem& e = segment.elems[i];
        if (e.kind != Segment::Elem::kText || e.end <= begin || e.cue == last_cue) continue;
        if (cues == kMaxCuesPerSentence) {
          size_t end = e.begin;
          while (end > begin && space(s[end - 1])) --end;
          if (end > begin) sentences.push_back({begin, end});
          begin = e.begin;
          cues = 0;
        }
        last_cue = e.cue;
        ++cues;
      }
      sentences.push_back({begin, span.end});
    }
    const size_t first_unit = units.size();
    // Where lines were joined: a tag is not the tag of a sentence on another line.
    std::vector<size_t> joins;
    for (const Segment::Elem& e : segment.elems)
      if (e.kind == Segment::Elem::kJoin) joins.push_back(e.begin);
    // Only short gaps on one line: a tag far from a sentence is not its tag.
    const auto all_space = [&](size_t b, size_t e) {
      if (e > b + 64) return false;
      const auto join = std::lower_bound(joins.begin(), joins.end(), b);
      if (join != joins.end() && *join < e) return false;
      for (size_t i = b; i < e; ++i)
        if (!space(s[i])) return false;
      return true;
    };
    // The first sentence ending after p.
    const auto after = [&](size_t p) {
      return static_cast<size_t>(std::upper_bound(sentences.begin(), sentences.end(), p,
                                                  [](size_t v, const SentenceSpan& span) { return v < span.end; }) -
                                 sentences.begin());
    };
    // Which sentence a tag belongs to (-1: none): an opening tag goes with the sentence it
    // starts (only spaces before it), a closing one with the sentence it ends, a point with the
    // sentence it is inside.
    const auto sentence_of = [&](const Segment::Elem& e) -> int {
      const size_t p = e.begin;
      const size_t k = after(p);
      if (e.kind == Segment::Elem::kOpen) {
        if (k < sentences.size() && (sentences[k].begin <= p || all_space(p, sentences[k].begin)))
          return static_cast<int>(k);
        return -1;
      }
      if (e.kind == Segment::Elem::kClose) {
        // The last sentence starting before p.
        size_t j = k < sentences.size() && sentences[k].begin < p ? k + 1 : k;
        if (j == 0) return -1;
        --j;
        if (p <= sentences[j].end || all_space(sentences[j].end, p)) return static_cast<int>(j);
        return -1;
      }
      if (k < sentences.size() && sentences[k].begin < p) return static_cast<int>(k);
      return -1;
    };

    struct Builder {
      FragmentWriter fragment;
      std::string plain;
      bool tags = false;
      std::vector<int> stack;
      size_t cue = SIZE_MAX, group = SIZE_MAX;
      std::vector<std::pair<size_t, size_t>> groups;  // (cue, group) of each part
      std::vector<size_t> weights;
    };
    std::vector<Builder> builders(sentences.size());
    std::vector<int> active;  // spans open in the current cue, outermost first
    size_t active_cue = SIZE_MAX;
    const auto emit = [&](size_t c, size_t g, Token token) { cues_[c].groups[g].tokens.push_back(std::move(token)); };

    for (const Segment::Elem& e : segment.elems) {
      if (e.cue != active_cue) active.clear(), active_cue = e.cue;
      // Text is cut at sentence boundaries.
      std::vector<std::pair<int, std::pair<size_t, size_t>>> pieces;  // (sentence, bytes)
      if (e.kind == Segment::Elem::kText || e.kind == Segment::Elem::kJoin) {
        size_t at = e.begin;
        for (size_t k = after(e.begin); k < sentences.size() && at < e.end; ++k) {
          if (sentences[k].end <= at) continue;
          if (sentences[k].begin >= e.end) break;
          if (sentences[k].begin > at) pieces.push_back({-1, {at, sentences[k].begin}}), at = sentences[k].begin;
          const size_t stop = std::min(e.end, sentences[k].end);
          pieces.push_back({static_cast<int>(k), {at, stop}});
          at = stop;
        }
        if (at < e.end) pieces.push_back({-1, {at, e.end}});
      } else {
        pieces.push_back({sentence_of(e), {e.begin, e.begin}});
      }
      for (const auto& [k, range] : pieces) {
        if (k < 0) {
          Token token;
          if (e.kind == Segment::Elem::kText || e.kind == Segment::Elem::kJoin)
            token.kind = Token::kText, token.text = s.substr(range.first, range.second - range.first);
          else
            token.kind = e.kind == Segment::Elem::kOpen    ? Token::kOpen
                         : e.kind == Segment::Elem::kClose ? Token::kClose
                                                           : Token::kPoint,
            token.id = e.tag;
          emit(e.cue, e.group, std::move(token));
          continue;
        }
        Builder& b = builders[k];
        if (b.cue != e.cue || b.group != e.group) {
          if (b.cue != e.cue) {  // spans end with their cue
            while (!b.stack.empty()) b.fragment.close(), b.stack.pop_back();
          }
          b.cue = e.cue, b.group = e.group;
          b.groups.push_back({e.cue, e.group});
          b.weights.push_back(0);
          Token token;
          token.kind = Token::kUnit, token.id = static_cast<int>(first_unit + k), token.part = b.groups.size() - 1;
          emit(e.cue, e.group, token);
          if (b.stack.empty()) {
            for (int id : active) b.fragment.open(id), b.stack.push_back(id), b.tags = true;
          }
        }
        if (e.kind == Segment::Elem::kText || e.kind == Segment::Elem::kJoin) {
          const std::string text = s.substr(range.first, range.second - range.first);
          b.fragment.text(text);
          b.plain += text;
          b.weights.back() += code_points(text);
        } else if (e.kind == Segment::Elem::kOpen) {
          b.fragment.open(e.tag), b.stack.push_back(e.tag), b.tags = true;
        } else if (e.kind == Segment::Elem::kClose) {
          const auto at = std::find(b.stack.begin(), b.stack.end(), e.tag);
          if (at != b.stack.end()) {
            while (b.stack.end() != at) b.fragment.close(), b.stack.pop_back();
          }
        } else {
          b.fragment.point(e.tag), b.tags = true;
        }
      }
      if (e.kind == Segment::Elem::kOpen) active.push_back(e.tag);
      if (e.kind == Segment::Elem::kClose) {
        const auto at = std::find(active.begin(), active.end(), e.tag);
        if (at != active.end()) active.erase(at, active.end());
      }
    }
    for (Builder& b : builders) {
      Unit unit;
      if (b.tags) {
        unit.text = b.fragment.str();
        unit.markup = true;
      } else {
        unit.text = b.plain;
      }
      units.push_back(std::move(unit));
      parts_.push_back({std::move(b.weights)});
    }
    segment = Segment();
  }

  std::vector<std::vector<Token>> split(size_t unit, const std::string& translation) const;
  std::string write_group(const Group& group, const std::vector<std::vector<std::vector<Token>>>& parts) const;

  std::string source_;
  bool vtt_;
  std::vector<Cue> cues_;
  std::vector<TagText> tags_;
  std::vector<UnitParts> parts_;
};

// ---------------------------------------------------------------- writing

// One unit's translation shared out over the groups it spanned, by the source's weights.
std::vector<std::vector<Token>> SubtitleContent::split(size_t unit, const std::string& translation) const {
  struct Piece {
    Token::Kind kind;
    std::string text;  // one code point
    int id = -1;
  };
  std::vector<Piece> items;
  const auto add_text = [&](const std::string& t) {
    for (size_t i = 0; i < t.size();) {
      size_t n = utf8_length(t, i);
      if (n == 0) n = 1;
      std::string ch = t.substr(i, n);
      if (ch == "\n" || ch == "\r" || ch == "\t") ch = " ";
      items.push_back({Token::kText, ch, -1});
      i += n;
    }
  };
  if (units[unit].markup) {
    for (const FragmentPiece& p : read_fragment(translation)) {
      switch (p.kind) {
        case FragmentPiece::kText: add_text(p.text); break;
        case FragmentPiece::kOpen: items.push_back({Token::kOpen, "", p.id}); break;
        case FragmentPiece::kClose: items.push_back({Token::kClose, "", p.id}); break;
        case FragmentPiece::kPoint: items.push_back({Token::kPoint, "", p.id}); break;
        case FragmentPiece::kBreak: add_text(" "); break;
      }
    }
  } else {
    add_text(translation);
  }
  const std::vector<size_t>& weights = parts_[unit].weights;
  const size_t parts = std::max<size_t>(weights.size(), 1);
  std::vector<size_t> cuts;  // item index where each part after the first starts
  bool drop_at_cut = true;   // the cut is a space, left out
  if (parts > 1) {
    // Visible position of each item; candidates: spaces between words, else any character.
    std::vector<size_t> pos(items.size() + 1, 0);
    size_t visible = 0;
    for (size_t i = 0; i < items.size(); ++i) pos[i] = visible, visible += items[i].kind == Token::kText;
    pos[items.size()] = visible;
    std::vector<size_t> candidates;
    for (size_t i = 0; i < items.size(); ++i)
      if (items[i].kind == Token::kText && items[i].text == " " && pos[i] > 0 && pos[i] + 1 < visible)
        candidates.push_back(i);
    // Scripts written without spaces (Thai, Chinese, Japanese, ...) are cut between characters;
    // words of others are never cut, even if a cue is left empty.
    bool unspaced = false;
    for (const Piece& p : items)
      if (p.kind == Token::kText && utf8_length(p.text, 0) >= 3 &&
          code_point(p.text, 0, utf8_length(p.text, 0)) >= 0x0E00)
        unspaced = true;
    if (candidates.empty() && unspaced) {
      candidates.clear();
      drop_at_cut = false;
      for (size_t i = 0; i < items.size(); ++i)
        if (items[i].kind == Token::kText && pos[i] > 0) candidates.push_back(i);
    }
    size_t total = 0, sum = 0;
    for (size_t w : weights) total += w;
    if (total == 0) total = 1;
    size_t from = 0;  // first candidate still free
    for (size_t j = 1; j < parts && from < candidates.size(); ++j) {
      sum += weights[j - 1];
      const double target = static_cast<double>(visible) * sum / total;
      const size_t room = parts - 1 - j;  // candidates the later cuts need
      // Positions grow, so the distance to the target falls and then rises.
      size_t best = from;
      while (best + 1 + room < candidates.size() &&
             std::abs(pos[candidates[best + 1]] - target) < std::abs(pos[candidates[best]] - target))
        ++best;
      cuts.push_back(candidates[best]);
      from = best + 1;
    }
  }
  // Opening tags just before a cut go with the next part.
  if (!drop_at_cut)
    for (size_t& c : cuts)
      while (c > 0 && items[c - 1].kind == Token::kOpen) --c;
  std::vector<std::vector<Token>> out(parts);
  std::vector<int> stack;
  size_t part = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (part < cuts.size() && i == cuts[part]) {
      for (size_t k = stack.size(); k-- > 0;) out[part].push_back({Token::kClose, "", stack[k], 0});
      ++part;
      for (int id : stack) out[part].push_back({Token::kOpen, "", id, 0});
      if (drop_at_cut) continue;
    }
    const Piece& p = items[i];
    if (p.kind == Token::kText) {
      if (!out[part].empty() && out[part].back().kind == Token::kText)
        out[part].back().text += p.text;
      else
        out[part].push_back({Token::kText, p.text, -1, 0});
      continue;
    }
    if (p.kind == Token::kOpen) stack.push_back(p.id);
    if (p.kind == Token::kClose) {
      const auto at = std::find(stack.begin(), stack.end(), p.id);
      if (at != stack.end()) stack.erase(at);
    }
    out[part].push_back({p.kind, "", p.id, 0});
  }
  return out;
}

std::string SubtitleContent::write_group(const Group& group,
                                         const std::vector<std::vector<std::vector<Token>>>& parts) const {
  std::vector<Token> tokens;
  for (const Token& t : group.tokens) {
    if (t.kind != Token::kUnit) {
      tokens.push_back(t);
      continue;
    }
    const auto& unit = parts[static_cast<size_t>(t.id)];
    if (t.part < unit.size()) tokens.insert(tokens.end(), unit[t.part].begin(), unit[t.part].end());
    tokens.push_back({Token::kText, " ", -1, 0});
  }
  // Spans made whole: an opening of a span already open and a closing of one that is not are
  // dropped, and spans still open at the end are closed.
  std::vector<Token> fixed;
  std::vector<int> stack;
  for (const Token& t : tokens) {
    if (t.kind == Token::kOpen) {
      if (std::find(stack.begin(), stack.end(), t.id) != stack.end() || tags_[t.id].close.empty()) continue;
      stack.push_back(t.id);
    } else if (t.kind == Token::kClose) {
      const auto at = std::find(stack.begin(), stack.end(), t.id);
      if (at == stack.end()) continue;
      while (stack.back() != t.id) fixed.push_back({Token::kClose, "", stack.back(), 0}), stack.pop_back();
      stack.pop_back();
    }
    fixed.push_back(t);
  }
  while (!stack.empty()) fixed.push_back({Token::kClose, "", stack.back(), 0}), stack.pop_back();
  // Then "</i> <i>" of one span and an empty "<i></i>" are dropped, in one pass: spaces are
  // kept as one token, so the token before them is found at once.
  std::vector<Token> merged;
  const auto blank = [](const Token& t) {
    return t.kind == Token::kText && t.text.find_first_not_of(' ') == std::string::npos;
  };
  for (const Token& t : fixed) {
    if (blank(t) && !merged.empty() && blank(merged.back())) {
      merged.back().text += t.text;
      continue;
    }
    if (t.kind == Token::kOpen || t.kind == Token::kClose) {
      const size_t k = merged.size() - (!merged.empty() && blank(merged.back()) ? 1 : 0);
      if (k > 0 && merged[k - 1].id == t.id &&
          merged[k - 1].kind == (t.kind == Token::kOpen ? Token::kClose : Token::kOpen)) {
        merged.erase(merged.begin() + static_cast<std::ptrdiff_t>(k - 1));
        continue;
      }
    }
    merged.push_back(t);
  }
  fixed = std::move(merged);
  // Atoms: words, single spaces between them, tags.
  struct Atom {
    std::string text;
    bool tag = false, space = false;
    size_t width = 0;
  };
  std::vector<Atom> atoms;
  bool pending_space = false, any_word = false;
  for (const Token& t : fixed) {
    if (t.kind == Token::kText) {
      for (size_t i = 0; i < t.text.size();) {
        if (space(t.text[i])) {
          pending_space = any_word;
          ++i;
          continue;
        }
        size_t j = i;
        while (j < t.text.size() && !space(t.text[j])) ++j;
        if (pending_space) atoms.push_back({" ", false, true, 1});
        pending_space = false;
        std::string word = t.text.substr(i, j - i);
        if (vtt_) {
          std::string escaped;
          for (char c : word) escaped += c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;" : std::string(1, c);
          word = escaped;
        }
        atoms.push_back({word, false, false, code_points(t.text.substr(i, j - i))});
        any_word = true;
        i = j;
      }
      continue;
    }
    // A closing tag stays with the word before it; other tags with the word after them.
    if (pending_space && t.kind != Token::kClose) atoms.push_back({" ", false, true, 1}), pending_space = false;
    atoms.push_back({t.kind == Token::kClose ? tags_[t.id].close : tags_[t.id].open, true, false, 0});
  }
  // Wrapped to the group's lines, each break at the space nearest its share of the width.
  size_t width = 0;
  std::vector<size_t> spaces, at;
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (atoms[i].space) spaces.push_back(i), at.push_back(width);
    width += atoms[i].width;
  }
  const size_t lines = std::min(std::max<size_t>(group.lines, 1), spaces.size() + 1);
  std::vector<size_t> breaks;
  size_t from = 0;
  for (size_t j = 1; j < lines; ++j) {
    const double target = static_cast<double>(width) * j / lines;
    size_t best = from;
    while (best + 1 + (lines - 1 - j) < spaces.size() && std::abs(at[best + 1] - target) < std::abs(at[best] - target))
      ++best;
    breaks.push_back(spaces[best]);
    from = best + 1;
  }
  std::string out = group.prefix;
  size_t next = 0;
  for (size_t i = 0; i < atoms.size(); ++i) {
    if (next < breaks.size() && breaks[next] == i) {
      out += '\n';
      ++next;
      continue;
    }
    out += atoms[i].text;
  }
  return out;
}

std::string SubtitleContent::rebuild(const std::vector<std::string>& translated) const {
  std::vector<std::vector<std::vector<Token>>> parts(units.size());
  for (size_t u = 0; u < units.size(); ++u) {
    if (u < translated.size())
      parts[u] = split(u, translated[u]);
    else
      parts[u] = split(u, units[u].text);
  }
  std::string out;
  size_t copied = 0;
  for (const Cue& cue : cues_) {
    bool translated_cue = false;
    for (const Group& g : cue.groups)
      for (const Token& t : g.tokens) translated_cue |= t.kind == Token::kUnit;
    if (!translated_cue) continue;
    out.append(source_, copied, cue.text_begin - copied);
    std::string text;
    for (const Group& g : cue.groups) {
      if (!text.empty()) text += '\n';
      text += write_group(g, parts);
    }
    // The cue's own line ending; an empty line would end the cue early.
    std::string lines;
    size_t start = 0;
    for (;;) {
      const size_t stop = text.find('\n', start);
      const std::string line = text.substr(start, stop == std::string::npos ? std::string::npos : stop - start);
      if (!line.empty()) {
        if (!lines.empty()) lines += cue.eol;
        lines += line;
      }
      if (stop == std::string::npos) break;
      start = stop + 1;
    }
    out += lines;
    copied = cue.text_end;
  }
  out.append(source_, copied, std::string::npos);
  return out;
}

}  // namespace

std::unique_ptr<FileContent> read_subtitles(const std::string& bytes, FileFormat format, const FileOptions& options) {
  if (format != FileFormat::kSrt && format != FileFormat::kVtt) throw Error("subtitles: not a subtitle format");
  const bool vtt = format == FileFormat::kVtt;
  return std::make_unique<SubtitleContent>(bytes, vtt, options);
}

}  // namespace ordo::document
