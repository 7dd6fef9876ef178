#include "server/text_layout.h"

#include "ordo/document.h"

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

// `line` cut into its sentences (appended to `runs`) and the text around them. With
// `words_only`, a sentence of only punctuation or symbols stays as text.
LinePieces cut(const std::string& line, const std::string& language, std::vector<std::string>& runs,
               bool words_only) {
  LinePieces pieces;
  std::vector<ordo::SentenceSpan> spans;
  try {
    spans = ordo::split_sentences(line, language);
  } catch (const std::exception&) {
    spans.clear();  // not expected (the text is valid UTF-8): the line as one sentence
    size_t a = 0, b = line.size();
    while (a < b && is_space(line[a])) ++a;
    while (b > a && is_space(line[b - 1])) --b;
    if (a < b) spans.push_back({a, b});
  }
  std::string keep;
  size_t at = 0;
  for (const ordo::SentenceSpan& span : spans) {
    if (span.begin < at || span.end > line.size() || span.begin >= span.end) continue;
    keep += line.substr(at, span.begin - at);
    std::string sentence = line.substr(span.begin, span.end - span.begin);
    at = span.end;
    if (words_only && !has_words(sentence)) {
      keep += sentence;
      continue;
    }
    pieces.keep.push_back(std::move(keep));
    keep.clear();
    pieces.runs.push_back(runs.size());
    // A line break inside a sentence is a soft wrap: the model sees a space (as the CLI's).
    for (char& c : sentence)
      if (c == '\n' || c == '\r') c = ' ';
    runs.push_back(std::move(sentence));
  }
  keep += line.substr(at);
  pieces.keep.push_back(std::move(keep));
  return pieces;
}

void join(const LinePieces& pieces, const std::vector<std::string>& translated, bool html, std::string& out) {
  const auto put = [&](const std::string& text) { out += html ? escape_html_text(text) : text; };
  for (size_t i = 0; i < pieces.runs.size(); ++i) {
    put(pieces.keep[i]);
    put(pieces.runs[i] < translated.size() ? translated[pieces.runs[i]] : std::string());
  }
  put(pieces.keep.back());
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

LineText::LineText(const std::string& text, const std::string& language) {
  size_t start = 0;
  while (true) {
    size_t stop = text.find('\n', start);
    const bool last = stop == std::string::npos;
    if (last) stop = text.size();
    std::string line = text.substr(start, stop - start);
    const bool cr = !line.empty() && line.back() == '\r';
    if (cr) line.pop_back();
    lines_.push_back(cut(line, language, runs_, false));
    crs_.push_back(cr);
    if (last) break;
    start = stop + 1;
  }
}

std::string LineText::rebuild(const std::vector<std::string>& translated) const {
  std::string out;
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (i > 0) out += '\n';
    join(lines_[i], translated, false, out);
    if (crs_[i]) out += '\r';
  }
  return out;
}

HtmlText::HtmlText(const std::string& html, const std::string& language) : source_(html) {
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
    // The whole node at once: in HTML a line break inside a paragraph is only white space.
    node.pieces = cut(t.text, language, runs_, true);
    if (node.pieces.runs.empty()) continue;
    if (node.crlf)
      for (std::string& keep : node.pieces.keep)
        for (size_t at = keep.find('\n'); at != std::string::npos; at = keep.find('\n', at + 2)) keep.insert(at, "\r");
    nodes_.push_back(std::move(node));
  }
}

std::string HtmlText::rebuild(const std::vector<std::string>& translated) const {
  std::string out;
  out.reserve(source_.size() + source_.size() / 4);
  size_t pos = 0;
  for (const Node& node : nodes_) {
    out.append(source_, pos, node.begin - pos);
    join(node.pieces, translated, true, out);
    pos = node.end;
  }
  out.append(source_, pos, std::string::npos);
  return out;
}

}  // namespace ordo::server
