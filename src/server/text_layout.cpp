#include "server/text_layout.h"

#include <gumbo.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>

namespace ordo::server {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Whether a text has something to translate: a letter or digit, or a character outside the
// punctuation and symbol blocks. "|", "»", "—" or "·" between tags stay as they are instead of
// going through the model (which would make up words for them).
bool has_words(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (std::isalnum(c)) return true;
      ++i;
      continue;
    }
    const size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    uint32_t cp = n == 1 ? c : c & (0xFF >> (n + 1));
    for (size_t k = 1; k < n && i + k < text.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
    const bool symbol = (cp >= 0xA0 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
                        (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
                        (cp >= 0xFF01 && cp <= 0xFF0F) || (cp >= 0x1F000 && cp <= 0x1FAFF);
    if (!symbol) return true;
    i += n;
  }
  return false;
}

// Elements whose text is code or data, not prose.
bool skipped(const GumboNode* node) {
  if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_TEMPLATE) return false;
  switch (node->v.element.tag) {
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEMPLATE:
      return true;
    default:
      return false;
  }
}

struct TextNode {
  size_t begin, end;
  std::string text;  // decoded
};

// The text nodes under `root`, in tree order (an explicit stack: no recursion on deep input).
void collect(const GumboNode* root, const char* base, size_t size, std::vector<TextNode>& out) {
  std::vector<const GumboNode*> stack = {root};
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    if (node->type == GUMBO_NODE_TEXT) {
      const GumboText& t = node->v.text;
      // Nodes the parser made up (no source bytes) or that point outside the input are left alone.
      if (t.original_text.data == nullptr || t.original_text.length == 0) continue;
      if (t.original_text.data < base || t.original_text.data + t.original_text.length > base + size) continue;
      const size_t begin = static_cast<size_t>(t.original_text.data - base);
      out.push_back({begin, begin + t.original_text.length, t.text});
      continue;
    }
    if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_DOCUMENT && node->type != GUMBO_NODE_TEMPLATE)
      continue;
    if (skipped(node)) continue;
    const GumboVector& children =
        node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
    for (unsigned i = children.length; i > 0; --i) stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
  }
}

}  // namespace

size_t html_tag_count(const std::string& html) {
  size_t tags = 0;
  for (size_t i = 0; i + 1 < html.size(); ++i)
    if (html[i] == '<' && std::isalpha(static_cast<unsigned char>(html[i + 1]))) ++tags;
  return tags;
}

std::string escape_html_text(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return out;
}

LineText::LineText(const std::string& text) {
  size_t start = 0;
  while (true) {
    size_t stop = text.find('\n', start);
    const bool last = stop == std::string::npos;
    if (last) stop = text.size();
    std::string line = text.substr(start, stop - start);
    const bool cr = !line.empty() && line.back() == '\r';
    if (cr) line.pop_back();
    bool blank = true;
    for (char c : line) blank = blank && is_space(c);
    run_of_line_.push_back(blank ? -1 : static_cast<int>(runs_.size()));
    if (!blank) runs_.push_back(line);
    lines_.push_back(std::move(line));
    crs_.push_back(cr);
    if (last) break;
    start = stop + 1;
  }
}

std::string LineText::rebuild(const std::vector<std::string>& translated) const {
  std::string out;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (i > 0) out += '\n';
    const int run = run_of_line_[i];
    out += run < 0 ? lines_[i] : (static_cast<size_t>(run) < translated.size() ? translated[run] : "");
    if (crs_[i]) out += '\r';
  }
  return out;
}

HtmlText::HtmlText(const std::string& html) : source_(html) {
  GumboOptions options = kGumboDefaultOptions;
  std::unique_ptr<GumboOutput, void (*)(GumboOutput*)> output(
      gumbo_parse_with_options(&options, source_.data(), source_.size()),
      [](GumboOutput* o) { gumbo_destroy_output(&kGumboDefaultOptions, o); });
  std::vector<TextNode> texts;
  if (output) collect(output->document, source_.data(), source_.size(), texts);
  // The tree order can differ from the source order (foster-parented table text): replace in
  // source order, and leave any node that overlaps another untouched.
  std::sort(texts.begin(), texts.end(), [](const TextNode& a, const TextNode& b) { return a.begin < b.begin; });
  size_t last_end = 0;
  for (const TextNode& t : texts) {
    if (t.begin < last_end) continue;
    last_end = t.end;
    const size_t crlf_at = source_.find("\r\n", t.begin);
    Node node{t.begin, t.end, crlf_at != std::string::npos && crlf_at + 1 < t.end, {}};
    bool any = false;
    size_t start = 0;
    while (start <= t.text.size()) {
      size_t stop = t.text.find('\n', start);
      if (stop == std::string::npos) stop = t.text.size();
      const std::string line = t.text.substr(start, stop - start);
      size_t a = 0, b = line.size();
      while (a < b && is_space(line[a])) ++a;
      while (b > a && is_space(line[b - 1])) --b;
      Line l;
      if (a == b || !has_words(line)) {
        l.before = line;
      } else {
        l.before = line.substr(0, a);
        l.after = line.substr(b);
        l.run = static_cast<int>(runs_.size());
        runs_.push_back(line.substr(a, b - a));
        any = true;
      }
      node.lines.push_back(std::move(l));
      if (stop == t.text.size()) break;
      start = stop + 1;
    }
    if (any) nodes_.push_back(std::move(node));
  }
}

std::string HtmlText::rebuild(const std::vector<std::string>& translated) const {
  std::string out;
  out.reserve(source_.size() + source_.size() / 4);
  size_t pos = 0;
  for (const Node& node : nodes_) {
    out.append(source_, pos, node.begin - pos);
    for (size_t i = 0; i < node.lines.size(); ++i) {
      const Line& l = node.lines[i];
      if (i > 0) out += node.crlf ? "\r\n" : "\n";
      out += l.before;
      if (l.run >= 0) out += escape_html_text(static_cast<size_t>(l.run) < translated.size() ? translated[l.run] : "");
      out += l.after;
    }
    pos = node.end;
  }
  out.append(source_, pos, std::string::npos);
  return out;
}

}  // namespace ordo::server
