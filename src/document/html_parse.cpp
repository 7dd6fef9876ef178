// Gumbo on untrusted HTML: the pre-scan and the arena (see html_parse.h for why).
#include "document/html_parse.h"

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_map>
#include <vector>

#include "ordo/error.h"

namespace ordo::document {
namespace {

[[noreturn]] void refuse(const std::string& what, const char* limit, double value) {
  std::string shown = std::to_string(value);
  if (value == static_cast<double>(static_cast<size_t>(value))) shown = std::to_string(static_cast<size_t>(value));
  throw Error("HTML input: " + what + " (limit " + limit + " " + shown + ")");
}

// ------------------------------------------------------------------ the tree builder's model
// What the pre-scan knows of an element (the HTML standard's tree construction rules).
enum Flag : unsigned {
  kVoid = 1u << 0,          // no end tag, never open
  kSpecial = 1u << 1,       // the standard's "special" category
  kFormatting = 1u << 2,    // a b big code em font i nobr s small strike strong tt u
  kClosesP = 1u << 3,       // its start tag closes an open p
  kImpliedEnd = 1u << 4,    // popped by "generate implied end tags"
  kMarker = 1u << 5,        // pushes a marker on the list of active formatting elements
  kRawText = 1u << 6,       // its content is text up to its end tag (outside SVG/MathML)
  kScope = 1u << 7,         // bounds the default scope
  kTableScope = 1u << 8,    // bounds the table scope
  kBreakout = 1u << 9,      // a start tag that leaves SVG/MathML content
  kIntegration = 1u << 10,  // an SVG/MathML element whose children are HTML
  kForeignRoot = 1u << 11,  // svg, math
  kIgnored = 1u << 12,      // html, head, body: always there, never opened or closed here
  kTablePart = 1u << 13,    // tbody thead tfoot
  kCell = 1u << 14,         // td th
  kScopedEnd = 1u << 15,    // its end tag closes the nearest one in scope with all above it
};

struct TagInfo {
  const char* name;
  unsigned flags;
};

constexpr unsigned kBlock = kSpecial | kClosesP | kScopedEnd;
const TagInfo kTags[] = {
    {"a", kFormatting},
    {"address", kBlock},
    {"applet", kSpecial | kMarker | kScope | kScopedEnd},
    {"area", kSpecial | kVoid},
    {"article", kBlock},
    {"aside", kBlock},
    {"b", kFormatting | kBreakout},
    {"base", kSpecial | kVoid},
    {"basefont", kSpecial | kVoid},
    {"bgsound", kSpecial | kVoid},
    {"big", kFormatting | kBreakout},
    {"blockquote", kBlock | kBreakout},
    {"body", kSpecial | kIgnored | kBreakout},
    {"br", kSpecial | kVoid | kBreakout},
    {"button", kSpecial | kScopedEnd},
    {"caption", kSpecial | kMarker | kScope | kScopedEnd},
    {"center", kBlock | kBreakout},
    {"code", kFormatting | kBreakout},
    {"col", kSpecial | kVoid},
    {"colgroup", kSpecial | kScopedEnd},
    {"dd", kSpecial | kImpliedEnd | kClosesP | kBreakout | kScopedEnd},
    {"details", kBlock},
    {"dialog", kBlock},
    {"dir", kBlock},
    {"div", kBlock | kBreakout},
    {"dl", kBlock | kBreakout},
    {"dt", kSpecial | kImpliedEnd | kClosesP | kBreakout | kScopedEnd},
    {"em", kFormatting | kBreakout},
    {"embed", kSpecial | kVoid | kBreakout},
    {"fieldset", kBlock},
    {"figcaption", kBlock},
    {"figure", kBlock},
    {"font", kFormatting},
    {"footer", kBlock},
    {"form", kBlock},
    {"frame", kSpecial | kVoid},
    {"frameset", kSpecial},
    {"h1", kBlock | kBreakout},
    {"h2", kBlock | kBreakout},
    {"h3", kBlock | kBreakout},
    {"h4", kBlock | kBreakout},
    {"h5", kBlock | kBreakout},
    {"h6", kBlock | kBreakout},
    {"head", kSpecial | kIgnored | kBreakout},
    {"header", kBlock},
    {"hgroup", kBlock},
    {"hr", kBlock | kVoid | kBreakout},
    {"html", kSpecial | kIgnored | kScope | kTableScope},
    {"i", kFormatting | kBreakout},
    {"iframe", kSpecial | kRawText},
    {"image", kVoid},
    {"img", kSpecial | kVoid | kBreakout},
    {"input", kSpecial | kVoid},
    {"keygen", kSpecial | kVoid},
    {"li", kSpecial | kImpliedEnd | kClosesP | kBreakout | kScopedEnd},
    {"link", kSpecial | kVoid},
    {"listing", kBlock | kBreakout},
    {"main", kBlock},
    {"marquee", kSpecial | kMarker | kScope | kScopedEnd},
    {"menu", kBlock | kBreakout},
    {"meta", kSpecial | kVoid | kBreakout},
    {"nav", kBlock},
    {"nobr", kFormatting | kBreakout},
    {"noembed", kSpecial | kRawText},
    {"noframes", kSpecial | kRawText},
    {"noscript", kSpecial},
    {"object", kSpecial | kMarker | kScope | kScopedEnd},
    {"ol", kBlock | kBreakout},
    {"optgroup", kImpliedEnd},
    {"option", kImpliedEnd},
    {"p", kBlock | kImpliedEnd | kBreakout},
    {"param", kSpecial | kVoid},
    {"plaintext", kBlock | kRawText},
    {"pre", kBlock | kBreakout},
    {"rb", kImpliedEnd},
    {"rp", kImpliedEnd},
    {"rt", kImpliedEnd},
    {"rtc", kImpliedEnd},
    {"ruby", kBreakout},
    {"s", kFormatting | kBreakout},
    {"script", kSpecial | kRawText},
    {"section", kBlock},
    {"select", kSpecial | kScope | kTableScope | kScopedEnd},
    {"small", kFormatting | kBreakout},
    {"source", kSpecial | kVoid},
    {"span", kBreakout},
    {"strike", kFormatting | kBreakout},
    {"strong", kFormatting | kBreakout},
    {"style", kSpecial | kRawText},
    {"sub", kBreakout},
    {"summary", kBlock},
    {"sup", kBreakout},
    {"table", kSpecial | kBreakout | kTableScope | kScopedEnd},
    {"tbody", kSpecial | kTablePart | kScopedEnd},
    {"td", kSpecial | kMarker | kScope | kCell | kScopedEnd},
    {"template", kSpecial | kMarker | kScope | kTableScope | kScopedEnd},
    {"textarea", kSpecial | kRawText},
    {"tfoot", kSpecial | kTablePart | kScopedEnd},
    {"th", kSpecial | kMarker | kScope | kCell | kScopedEnd},
    {"thead", kSpecial | kTablePart | kScopedEnd},
    {"title", kSpecial | kRawText | kIntegration},
    {"tr", kSpecial | kScopedEnd},
    {"track", kSpecial | kVoid},
    {"tt", kFormatting | kBreakout},
    {"u", kFormatting | kBreakout},
    {"ul", kBlock | kBreakout},
    {"var", kBreakout},
    {"wbr", kSpecial | kVoid},
    {"xmp", kSpecial | kRawText},
    // SVG and MathML
    {"svg", kForeignRoot},
    {"math", kForeignRoot},
    {"foreignobject", kSpecial | kIntegration | kScope},
    {"desc", kSpecial | kIntegration | kScope},
    {"mi", kSpecial | kIntegration | kScope},
    {"mo", kSpecial | kIntegration | kScope},
    {"mn", kSpecial | kIntegration | kScope},
    {"ms", kSpecial | kIntegration | kScope},
    {"mtext", kSpecial | kIntegration | kScope},
    {"annotation-xml", kSpecial | kIntegration | kScope},
};
constexpr int kKnownTags = static_cast<int>(sizeof kTags / sizeof kTags[0]);

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'; }
bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

class Scan {
 public:
  Scan(const std::string& html, const HtmlLimits& limits) : s_(html), limits_(limits) {
    for (int i = 0; i < kKnownTags; ++i) ids_.emplace(kTags[i].name, i);
    flags_.reserve(kKnownTags);
    for (int i = 0; i < kKnownTags; ++i) flags_.push_back(kTags[i].flags);
  }

  void run() {
    if (s_.size() > limits_.max_bytes)
      refuse("the page has " + std::to_string(s_.size()) + " bytes", "max_bytes",
             static_cast<double>(limits_.max_bytes));
    size_t i = 0;
    const size_t n = s_.size();
    while (i < n) {
      const void* lt = std::memchr(s_.data() + i, '<', n - i);
      if (!lt) break;
      i = static_cast<size_t>(static_cast<const char*>(lt) - s_.data());
      if (i + 1 >= n) break;
      const char next = s_[i + 1];
      if (next == '!') {
        if (s_.compare(i, 4, "<!--") == 0) {
          const size_t close = s_.find("-->", i + 4);
          i = close == std::string::npos ? n : close + 3;
        } else {
          i = skip_to_gt(i + 2);  // doctype, CDATA (its end is later: more tags counted, not fewer)
        }
      } else if (next == '?') {
        i = skip_to_gt(i + 2);
      } else if (next == '/') {
        if (i + 2 < n && is_alpha(s_[i + 2])) {
          i = tag(i + 2, false);
        } else {
          i = i + 2 < n && s_[i + 2] == '>' ? i + 3 : skip_to_gt(i + 2);
        }
      } else if (is_alpha(next)) {
        i = tag(i + 1, true);
      } else {
        ++i;
      }
    }
  }

 private:
  struct Open {
    int id;
    bool foreign;
  };
  struct Entry {  // on the list of active formatting elements; id -1 = marker
    int id;
    size_t attrs_begin, attrs_end;
  };

  size_t skip_to_gt(size_t from) const {
    const size_t gt = s_.find('>', from);
    return gt == std::string::npos ? s_.size() : gt + 1;
  }

  int id_of(const std::string& name) {
    const auto it = ids_.find(name);
    if (it != ids_.end()) return it->second;
    const int id = static_cast<int>(flags_.size());
    ids_.emplace(name, id);
    flags_.push_back(0);  // an unknown (custom) element: ordinary, not special
    return id;
  }
  bool has(int id, unsigned flag) const { return (flags_[static_cast<size_t>(id)] & flag) != 0; }
  bool named(int id, const char* name) const { return id < kKnownTags && std::strcmp(kTags[id].name, name) == 0; }

  // A tag from its name at `at` to its '>'; returns the index after it.
  size_t tag(size_t at, bool start) {
    const size_t n = s_.size();
    std::string name;
    size_t i = at;
    while (i < n && !is_space(s_[i]) && s_[i] != '/' && s_[i] != '>') name += lower(s_[i++]);
    // Attributes, as the tokenizer reads them (a quoted value may hold '>').
    const size_t attrs_begin = i;
    size_t attributes = 0;
    bool self_closing = false, font_breakout = false;
    while (i < n && s_[i] != '>') {
      if (is_space(s_[i])) {
        ++i;
        continue;
      }
      if (s_[i] == '/') {
        self_closing = i + 1 < n && s_[i + 1] == '>';
        ++i;
        continue;
      }
      self_closing = false;
      ++attributes;
      const size_t name_start = i++;  // the first character may be '='
      while (i < n && !is_space(s_[i]) && s_[i] != '/' && s_[i] != '>' && s_[i] != '=') ++i;
      std::string attribute;
      if (i - name_start <= 5)
        for (size_t k = name_start; k < i; ++k) attribute += lower(s_[k]);
      font_breakout = font_breakout || attribute == "color" || attribute == "face" || attribute == "size";
      size_t j = i;
      while (j < n && is_space(s_[j])) ++j;
      if (j < n && s_[j] == '=') {
        i = j + 1;
        while (i < n && is_space(s_[i])) ++i;
        if (i < n && (s_[i] == '"' || s_[i] == '\'')) {
          const size_t close = s_.find(s_[i], i + 1);
          i = close == std::string::npos ? n : close + 1;
        } else {
          while (i < n && !is_space(s_[i]) && s_[i] != '>') ++i;
        }
      }
    }
    const size_t attrs_end = i;
    const size_t after = i < n ? i + 1 : n;
    if (start) {
      if (attributes > limits_.max_attributes)
        refuse("the element at byte " + std::to_string(at - 1) + " has " + std::to_string(attributes) + " attributes",
               "max_attributes", static_cast<double>(limits_.max_attributes));
      total_attributes_ += attributes;
      if (total_attributes_ > limits_.max_total_attributes)
        refuse("more than " + std::to_string(limits_.max_total_attributes) + " attributes in all (at byte " +
                   std::to_string(at - 1) + ")",
               "max_total_attributes", static_cast<double>(limits_.max_total_attributes));
    }
    if (i >= n) return n;  // a tag cut off by the end of the input is dropped
    const int id = id_of(name);
    if (start) {
      start_tag(id, self_closing, font_breakout, attrs_begin, attrs_end, at - 1);
      // Raw text (script, style, textarea, ...): up to its end tag, tags in it are text. Not
      // where the parser may ignore the start tag (in a select, after a frameset): there the
      // text is scanned as markup (more elements counted, never fewer).
      if (named(id, "frameset")) seen_frameset_ = true;
      if (has(id, kRawText) && !stack_.empty() && stack_.back().id == id && !stack_.back().foreign && !seen_frameset_ &&
          find({id_of("select")}, 0, 0) < 0) {
        if (named(id, "plaintext")) return n;
        return skip_raw_text(after, name);
      }
    } else {
      end_tag(id);
    }
    return after;
  }

  size_t skip_raw_text(size_t from, const std::string& name) const {
    const size_t n = s_.size();
    for (size_t i = from; i + 2 + name.size() <= n; ++i) {
      if (s_[i] != '<' || s_[i + 1] != '/') continue;
      bool match = true;
      for (size_t k = 0; k < name.size() && match; ++k) match = lower(s_[i + 2 + k]) == name[k];
      const size_t end = i + 2 + name.size();
      if (match && (end == n || is_space(s_[end]) || s_[end] == '/' || s_[end] == '>')) return i;
    }
    return n;
  }

  void count_element(size_t byte) {
    if (++elements_ > limits_.max_elements)
      refuse("more than " + std::to_string(limits_.max_elements) + " elements (at byte " + std::to_string(byte) + ")",
             "max_elements", static_cast<double>(limits_.max_elements));
  }

  void push(int id, bool foreign, size_t byte) {
    stack_.push_back({id, foreign});
    if (stack_.size() > limits_.max_depth)
      refuse("more than " + std::to_string(limits_.max_depth) + " elements open at once (nested) at byte " +
                 std::to_string(byte),
             "max_depth", static_cast<double>(limits_.max_depth));
    if (!foreign && has(id, kMarker)) active_.push_back({-1, 0, 0});
  }

  void pop_to(size_t index) {  // pops stack_[index] and everything above it
    while (stack_.size() > index) {
      const Open top = stack_.back();
      stack_.pop_back();
      if (!top.foreign && has(top.id, kMarker)) {  // clear the list up to the last marker
        while (!active_.empty() && active_.back().id != -1) active_.pop_back();
        if (!active_.empty()) active_.pop_back();
      }
    }
  }

  // The current node is SVG/MathML content (not an integration point).
  bool in_foreign() const { return !stack_.empty() && stack_.back().foreign && !has(stack_.back().id, kIntegration); }

  // Index of the nearest open element with id in `ids` (or any cell/heading when `flag`),
  // scanning down from the current node and stopping at elements with `stop`; -1 if none.
  long find(const std::vector<int>& ids, unsigned flag, unsigned stop) const {
    for (size_t k = stack_.size(); k > 0; --k) {
      const Open& e = stack_[k - 1];
      if (!e.foreign && (std::find(ids.begin(), ids.end(), e.id) != ids.end() || (flag && has(e.id, flag))))
        return static_cast<long>(k - 1);
      if (e.foreign ? (stop & kScope) && has(e.id, kIntegration) : has(e.id, stop)) return -1;
    }
    return -1;
  }

  bool is_heading(int id) const {
    return id < kKnownTags && kTags[id].name[0] == 'h' && kTags[id].name[1] >= '1' && kTags[id].name[1] <= '6' &&
           kTags[id].name[2] == 0;
  }

  // font_breakout: a <font> with color, face or size (which leaves SVG/MathML as <b> does).
  void start_tag(int id, bool self_closing, bool font_breakout, size_t attrs_begin, size_t attrs_end, size_t byte) {
    count_element(byte);
    if (in_foreign() && (has(id, kBreakout) || (named(id, "font") && font_breakout))) {
      // Leaves SVG/MathML: the foreign elements on top are popped, then HTML rules apply.
      size_t k = stack_.size();
      while (k > 0 && stack_[k - 1].foreign && !has(stack_[k - 1].id, kIntegration)) --k;
      pop_to(k);
    }
    if (in_foreign() || has(id, kForeignRoot)) {  // SVG/MathML: "/>" closes
      if (!self_closing) push(id, true, byte);
      return;
    }
    if (has(id, kIgnored)) return;
    // Table parts outside a table (or template) are ignored by the parser: not pushed, so
    // that no later end tag can pop real elements above one the parser never made.
    const bool table_part = has(id, kCell) || has(id, kTablePart) || named(id, "tr") || named(id, "caption") ||
                            named(id, "colgroup") || named(id, "col");
    if (table_part && find({id_of("table"), id_of("template")}, 0, 0) < 0) return;
    const std::vector<int> none;
    if (named(id, "li") || named(id, "dd") || named(id, "dt")) {
      // The nearest open list item of the kind is closed, unless a special element other than
      // address, div, p comes first.
      for (size_t k = stack_.size(); k > 0; --k) {
        const Open& e = stack_[k - 1];
        const bool same = !e.foreign && (named(id, "li") ? named(e.id, "li") : named(e.id, "dd") || named(e.id, "dt"));
        if (same) {
          pop_to(k - 1);
          break;
        }
        if (e.foreign || (has(e.id, kSpecial) && !named(e.id, "address") && !named(e.id, "div") && !named(e.id, "p")))
          break;
      }
    }
    if (has(id, kClosesP)) close_p();
    if ((named(id, "option") || named(id, "optgroup")) && !stack_.empty() && named(stack_.back().id, "option"))
      pop_to(stack_.size() - 1);
    if (has(id, kCell) || named(id, "tr") || has(id, kTablePart)) {
      const long cell = find(none, kCell, kTableScope);
      if (cell >= 0) pop_to(static_cast<size_t>(cell));
      if (!has(id, kCell)) {
        const long row = find({id_of("tr")}, 0, kTableScope);
        if (row >= 0) pop_to(static_cast<size_t>(row));
      }
      if (has(id, kTablePart)) {
        const long part = find(none, kTablePart, kTableScope);
        if (part >= 0) pop_to(static_cast<size_t>(part));
      }
      // The parts the parser adds: table > tbody > tr > td.
      const int top = stack_.empty() ? -1 : stack_.back().id;
      if (top >= 0 && named(top, "table") && !has(id, kTablePart)) {
        count_element(byte);
        push(id_of("tbody"), false, byte);
      }
      if (has(id, kCell) && !stack_.empty() && !named(stack_.back().id, "tr")) {
        count_element(byte);
        push(id_of("tr"), false, byte);
      }
    }
    if (has(id, kVoid)) return;
    if (has(id, kFormatting)) {
      // Noah's Ark: at most three identical entries after the last marker.
      size_t same = 0, earliest = 0;
      for (size_t k = active_.size(); k > 0 && active_[k - 1].id != -1; --k) {
        const Entry& e = active_[k - 1];
        if (e.id == id && e.attrs_end - e.attrs_begin == attrs_end - attrs_begin &&
            s_.compare(e.attrs_begin, e.attrs_end - e.attrs_begin, s_, attrs_begin, attrs_end - attrs_begin) == 0) {
          ++same;
          earliest = k - 1;
        }
      }
      if (same >= 3) active_.erase(active_.begin() + static_cast<long>(earliest));
      active_.push_back({id, attrs_begin, attrs_end});
      size_t open = 0;
      for (const Entry& e : active_) open += e.id != -1;
      if (open > limits_.max_open_formatting)
        refuse("more than " + std::to_string(limits_.max_open_formatting) +
                   " formatting elements (a, b, i, font, ...) left open at byte " + std::to_string(byte) +
                   " (the parser reopens them after every block)",
               "max_open_formatting", static_cast<double>(limits_.max_open_formatting));
    }
    push(id, false, byte);
  }

  // Closes an open p in button scope: it and everything above it.
  void close_p() {
    const long p = find({id_of("p")}, 0, kScope);
    if (p < 0) return;
    for (size_t k = static_cast<size_t>(p) + 1; k < stack_.size(); ++k)
      if (named(stack_[k].id, "button")) return;
    pop_to(static_cast<size_t>(p));
  }

  void end_tag(int id) {
    if (in_foreign()) {
      // SVG/MathML: the nearest foreign element of that name; an HTML element ends the search
      // (the end tag then follows the HTML rules below).
      size_t k = stack_.size();
      while (k > 0 && stack_[k - 1].foreign) {
        if (stack_[k - 1].id == id) {
          pop_to(k - 1);
          return;
        }
        --k;
      }
    }
    if (has(id, kIgnored) || has(id, kVoid)) return;
    if (has(id, kFormatting)) {
      for (size_t k = active_.size(); k > 0 && active_[k - 1].id != -1; --k)
        if (active_[k - 1].id == id) {
          active_.erase(active_.begin() + static_cast<long>(k - 1));
          break;
        }
    }
    if (named(id, "form") || named(id, "frameset")) {  // removes the current node alone, if it is one
      if (!stack_.empty() && stack_.back().id == id && !stack_.back().foreign) pop_to(stack_.size() - 1);
      return;
    }
    if (!has(id, kScopedEnd)) {
      // Formatting, ordinary and the remaining special elements: popped (with what is above)
      // when only ordinary elements lie above; a special one in between keeps the stack (the
      // adoption agency moves, it does not shrink).
      for (size_t k = stack_.size(); k > 0; --k) {
        const Open& e = stack_[k - 1];
        if (!e.foreign && e.id == id) {
          pop_to(k - 1);
          return;
        }
        if (e.foreign || has(e.id, kSpecial)) return;
      }
      return;
    }
    // Special elements: the nearest one in scope (any heading for a heading), with everything
    // above it. Table parts have the table scope; list items and p add ol/ul and button.
    const unsigned stop =
        has(id, kCell) || has(id, kTablePart) || named(id, "tr") || named(id, "table") || named(id, "caption")
            ? kTableScope
            : kScope;
    long k = -1;
    if (is_heading(id)) {
      for (size_t j = stack_.size(); j > 0 && k < 0; --j) {
        const Open& e = stack_[j - 1];
        if (!e.foreign && is_heading(e.id))
          k = static_cast<long>(j - 1);
        else if (e.foreign ? has(e.id, kIntegration) : has(e.id, stop))
          break;
      }
    } else {
      k = find({id}, 0, stop);
    }
    if (k < 0) return;
    for (size_t j = static_cast<size_t>(k) + 1; j < stack_.size(); ++j) {
      if (named(id, "li") && (named(stack_[j].id, "ol") || named(stack_[j].id, "ul"))) return;
      if (named(id, "p") && named(stack_[j].id, "button")) return;
    }
    pop_to(static_cast<size_t>(k));
  }

  const std::string& s_;
  const HtmlLimits& limits_;
  std::unordered_map<std::string, int> ids_;
  std::vector<unsigned> flags_;
  std::vector<Open> stack_;
  std::vector<Entry> active_;
  size_t elements_ = 0, total_attributes_ = 0;
  bool seen_frameset_ = false;
};

}  // namespace

void check_html_limits(const std::string& html, const HtmlLimits& limits) { Scan(html, limits).run(); }

size_t html_memory_budget(size_t size, const HtmlLimits& limits) {
  if (limits.max_memory > 0) return limits.max_memory;
  return (size_t{16} << 20) + 128 * size;  // dense markup (a table of numbers) takes ~60 per byte
}

// ------------------------------------------------------------------ the arena
struct GumboParse::Arena {
  struct alignas(alignof(std::max_align_t)) Block {
    Block* prev;
    Block* next;
    size_t size;
  };
  Block head{&head, &head, 0};                      // a ring: head.next is the oldest block
  size_t live = 0, budget = 0, process_budget = 0;  // live: bytes malloc holds for the blocks
  size_t calls = 0;
  std::chrono::steady_clock::time_point deadline;
  std::jmp_buf* bail = nullptr;
  enum { kNone, kMemory, kProcessMemory, kTime } failure = kNone;

  // Bytes of all the live arenas of the process.
  static std::atomic<size_t>& process_live() {
    static std::atomic<size_t> bytes{0};
    return bytes;
  }
  // What malloc holds for a block of `size` bytes: the header, and glibc's chunk overhead and
  // rounding (8 bytes, 16-byte multiples).
  static size_t held(size_t size) { return (sizeof(Block) + size + 8 + 15) & ~size_t{15}; }

  ~Arena() {
    for (Block* b = head.next; b != &head;) {
      Block* next = b->next;
      std::free(b);
      b = next;
    }
    process_live() -= live;
  }
};

extern "C" {
// Gumbo's allocator: never returns NULL; over the budget or the deadline it jumps back to
// GumboParse's constructor (see html_parse.h for why that is safe).
static void* ordo_gumbo_allocate(void* userdata, size_t size) {
  auto* arena = static_cast<GumboParse::Arena*>(userdata);
  using Block = GumboParse::Arena::Block;
  if ((++arena->calls & 1023) == 0 && std::chrono::steady_clock::now() > arena->deadline) {
    arena->failure = GumboParse::Arena::kTime;
    std::longjmp(*arena->bail, 1);
  }
  const size_t held = GumboParse::Arena::held(size);
  if (size > arena->budget || held > arena->budget - std::min(arena->live, arena->budget)) {
    arena->failure = GumboParse::Arena::kMemory;
    std::longjmp(*arena->bail, 1);
  }
  std::atomic<size_t>& all = GumboParse::Arena::process_live();
  if (all.fetch_add(held) + held > arena->process_budget) {
    all -= held;
    arena->failure = GumboParse::Arena::kProcessMemory;
    std::longjmp(*arena->bail, 1);
  }
  void* raw = std::malloc(sizeof(Block) + size);
  if (raw == nullptr) {
    all -= held;
    arena->failure = GumboParse::Arena::kMemory;
    std::longjmp(*arena->bail, 1);
  }
  Block* block = static_cast<Block*>(raw);
  block->size = size;
  block->next = &arena->head;
  block->prev = arena->head.prev;
  arena->head.prev->next = block;
  arena->head.prev = block;
  arena->live += held;
  return block + 1;
}

static void ordo_gumbo_deallocate(void* userdata, void* ptr) {
  if (ptr == nullptr) return;
  auto* arena = static_cast<GumboParse::Arena*>(userdata);
  using Block = GumboParse::Arena::Block;
  Block* block = static_cast<Block*>(ptr) - 1;
  block->prev->next = block->next;
  block->next->prev = block->prev;
  const size_t held = GumboParse::Arena::held(block->size);
  arena->live -= held;
  GumboParse::Arena::process_live() -= held;
  std::free(block);
}
}

namespace {

// The only frame between setjmp and a longjmp that is ours: no objects with destructors.
GumboOutput* parse_or_bail(GumboParse::Arena* arena, const GumboOptions* options, const char* data, size_t size) {
  std::jmp_buf bail;
  arena->bail = &bail;
  if (setjmp(bail) != 0) {
    arena->bail = nullptr;
    return nullptr;
  }
  GumboOutput* output = gumbo_parse_with_options(options, data, size);
  arena->bail = nullptr;
  return output;
}

}  // namespace

GumboParse::GumboParse(const char* data, size_t size, size_t memory_budget, size_t process_budget,
                       std::chrono::steady_clock::time_point deadline, double seconds_limit)
    : arena_(new Arena) {
  arena_->budget = memory_budget;
  arena_->process_budget = process_budget;
  arena_->deadline = deadline;
  GumboOptions options = kGumboDefaultOptions;
  options.allocator = ordo_gumbo_allocate;
  options.deallocator = ordo_gumbo_deallocate;
  options.userdata = arena_;
  options.max_errors = 0;  // never read; recording them copies the open-element stack each time
  output_ = parse_or_bail(arena_, &options, data, size);
  if (output_ == nullptr) {
    const auto failure = arena_->failure;
    delete arena_;
    if (failure == Arena::kTime)
      refuse("parsing took longer than " + std::to_string(seconds_limit) + " s", "max_seconds", seconds_limit);
    if (failure == Arena::kProcessMemory)
      refuse("the pages parsed at once need more than " + std::to_string(process_budget >> 20) +
                 " MiB of memory (too many large pages at once: try again)",
             "max_memory_all_parses", static_cast<double>(process_budget));
    refuse("parsing needs more than " + std::to_string(memory_budget >> 20) + " MiB of memory", "max_memory",
           static_cast<double>(memory_budget));
  }
}

// Everything Gumbo allocated is in the arena: no gumbo_destroy_output (which recurses).
GumboParse::~GumboParse() { delete arena_; }

}  // namespace ordo::document
