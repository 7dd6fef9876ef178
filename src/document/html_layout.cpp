// The HTML layout (ordo::HtmlDocument): which bytes of a page are translated text, and how the
// translations and the inline markup go back. Shared by `ordo translate --format html` and
// `ordo serve`'s format=html. This file reads a page into blocks (html_layout.h);
// html_rebuild.cpp writes a block back.
//
// Gumbo parses the page (HTML5's error repair included) and gives each node's source bytes.
// The tree is walked once: block-level elements (anything not listed as inline below) end a
// block; the text nodes, inline tags, void elements and comments between two block boundaries
// are one block, a contiguous byte range of the source. Only these ranges are rewritten; all
// other bytes are copied. Inside a block:
//   - the text nodes, entities decoded, are the block's text, cut into sentences (ICU rules;
//     <br> is a hard boundary: lines of an address or a poem are not one sentence);
//   - an inline element is an interval of that text; its start and end tags are copied as
//     written and put around the target words that the source words inside it align to (the
//     hull of them, trailing/leading punctuation the source element did not cover left out);
//     siblings are kept disjoint and children inside parents, so the output nests as the input
//     did (siblings may swap places when the translation reorders words);
//   - an element whose words align nowhere wraps the target words at the same relative place
//     in the sentence (as everything is placed when the model gives no alignment); one with no
//     words wraps nothing, at the place of its first character;
//   - void elements, comments, <code>/<script>-like elements (copied whole, not translated) and
//     stray tags Gumbo ignored are points: placed before the target word aligned to the source
//     word after them;
//   - text between sentences is copied (as written where it is whole text nodes or has no
//     entities).
// A block whose tags Gumbo reordered (foster-parented table text, misnested formatting
// elements) falls back to translating each of its text nodes in place, sentence by sentence.
// Pages are untrusted: Gumbo only sees them through html_parse.h (limits checked first, then
// a parse with a memory budget and a deadline).
#include <gumbo.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "document/html_layout.h"
#include "document/html_parse.h"
#include "ordo/document.h"

namespace ordo {
namespace {

using document::Atom;
using document::Block;
using document::code_point_at;
using document::Element;
using document::is_space;

constexpr size_t kMaxBlockAtoms = 1000;

// A point (a tag, comment or element copied whole) at source bytes [begin, end).
Atom point_atom(size_t begin, size_t end) {
  Atom point;
  point.kind = Atom::kPoint;
  point.begin = begin;
  point.end = end;
  return point;
}

bool is_symbol(uint32_t cp) {
  if (cp < 0x80) return !std::isalnum(static_cast<int>(cp));
  return (cp >= 0xA0 && cp <= 0xBF) || cp == 0xD7 || cp == 0xF7 || (cp >= 0x2000 && cp <= 0x2BFF) ||
         (cp >= 0x3000 && cp <= 0x303F) || (cp >= 0xFE30 && cp <= 0xFE4F) || (cp >= 0xFF01 && cp <= 0xFF0F) ||
         (cp >= 0x1F000 && cp <= 0x1FAFF);
}

// Whether a text has something to translate: a letter or digit, or a character outside the
// punctuation and symbol blocks. "|", "»", "—" or "·" between tags stay as they are instead of
// going through the model (which would make up words for them).
bool has_words(const std::string& text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;
    if (!is_symbol(code_point_at(text, i, &n))) return true;
    i += n;
  }
  return false;
}

enum class Role { kBlock, kInline, kVoid, kBreak, kOpaque, kSkipped };

// How an element takes part in the text. Unknown (custom) elements count as inline.
Role role_of(const GumboNode* node) {
  if (node->type == GUMBO_NODE_TEMPLATE) return Role::kOpaque;
  switch (node->v.element.tag) {
    case GUMBO_TAG_A:
    case GUMBO_TAG_ABBR:
    case GUMBO_TAG_ACRONYM:
    case GUMBO_TAG_B:
    case GUMBO_TAG_BDI:
    case GUMBO_TAG_BDO:
    case GUMBO_TAG_BIG:
    case GUMBO_TAG_CITE:
    case GUMBO_TAG_DATA:
    case GUMBO_TAG_DFN:
    case GUMBO_TAG_EM:
    case GUMBO_TAG_FONT:
    case GUMBO_TAG_I:
    case GUMBO_TAG_INS:
    case GUMBO_TAG_DEL:
    case GUMBO_TAG_MARK:
    case GUMBO_TAG_Q:
    case GUMBO_TAG_S:
    case GUMBO_TAG_SMALL:
    case GUMBO_TAG_SPAN:
    case GUMBO_TAG_STRIKE:
    case GUMBO_TAG_STRONG:
    case GUMBO_TAG_SUB:
    case GUMBO_TAG_SUP:
    case GUMBO_TAG_TIME:
    case GUMBO_TAG_TT:
    case GUMBO_TAG_U:
    case GUMBO_TAG_LABEL:
    case GUMBO_TAG_NOBR:
    case GUMBO_TAG_BUTTON:
    case GUMBO_TAG_OUTPUT:
    case GUMBO_TAG_RUBY:
    case GUMBO_TAG_RB:
    case GUMBO_TAG_RT:
    case GUMBO_TAG_RP:
    case GUMBO_TAG_UNKNOWN: return Role::kInline;
    case GUMBO_TAG_BR: return Role::kBreak;
    case GUMBO_TAG_IMG:
    case GUMBO_TAG_WBR:
    case GUMBO_TAG_INPUT:
    case GUMBO_TAG_EMBED:
    case GUMBO_TAG_AREA:
    case GUMBO_TAG_SOURCE:
    case GUMBO_TAG_TRACK: return Role::kVoid;
    case GUMBO_TAG_CODE:
    case GUMBO_TAG_KBD:
    case GUMBO_TAG_SAMP:
    case GUMBO_TAG_VAR:
    case GUMBO_TAG_SCRIPT:
    case GUMBO_TAG_STYLE:
    case GUMBO_TAG_NOSCRIPT:
    case GUMBO_TAG_TEXTAREA:
    case GUMBO_TAG_SVG:
    case GUMBO_TAG_MATH:
    case GUMBO_TAG_SELECT:
    case GUMBO_TAG_IFRAME:
    case GUMBO_TAG_OBJECT:
    case GUMBO_TAG_VIDEO:
    case GUMBO_TAG_AUDIO:
    case GUMBO_TAG_CANVAS:
    case GUMBO_TAG_TEMPLATE: return Role::kOpaque;
    case GUMBO_TAG_PRE:
    case GUMBO_TAG_LISTING:
    case GUMBO_TAG_XMP:
    case GUMBO_TAG_PLAINTEXT: return Role::kSkipped;
    default: return Role::kBlock;
  }
}

const GumboVector& children_of(const GumboNode* node) {
  return node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
}

// The source bytes [begin, end) of a string piece, if it lies in the source.
bool source_range(const GumboStringPiece& piece, const char* base, size_t size, size_t& begin, size_t& end) {
  if (piece.data == nullptr || piece.length == 0) return false;
  if (piece.data < base || piece.data + piece.length > base + size) return false;
  begin = static_cast<size_t>(piece.data - base);
  end = begin + piece.length;
  return true;
}

// Whether an element's tags are the source's own (not made up or cloned by error repair).
bool own_tags(const GumboNode* node) {
  const unsigned made = GUMBO_INSERTION_BY_PARSER | GUMBO_INSERTION_RECONSTRUCTED_FORMATTING_ELEMENT |
                        GUMBO_INSERTION_ADOPTION_AGENCY_CLONED | GUMBO_INSERTION_CONVERTED_FROM_END_TAG |
                        GUMBO_INSERTION_FROM_IMAGE | GUMBO_INSERTION_FROM_ISINDEX;
  return (node->parse_flags & made) == 0;
}

// The source bytes a subtree covers (its tags and text), for elements copied whole.
bool subtree_range(const GumboNode* root, const char* base, size_t size, size_t& begin, size_t& end) {
  bool any = false;
  std::vector<const GumboNode*> stack = {root};
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    size_t b, e;
    const auto take = [&](const GumboStringPiece& piece) {
      if (!source_range(piece, base, size, b, e)) return;
      begin = any ? std::min(begin, b) : b;
      end = any ? std::max(end, e) : e;
      any = true;
    };
    if (node->type == GUMBO_NODE_ELEMENT || node->type == GUMBO_NODE_TEMPLATE) {
      take(node->v.element.original_tag);
      take(node->v.element.original_end_tag);
      const GumboVector& children = node->v.element.children;
      for (unsigned i = 0; i < children.length; ++i) stack.push_back(static_cast<const GumboNode*>(children.data[i]));
    } else if (node->type != GUMBO_NODE_DOCUMENT) {
      take(node->v.text.original_text);
    }
  }
  return any;
}

}  // namespace

struct HtmlDocument::Impl {
  std::string source;
  HtmlLimits limits;
  std::chrono::steady_clock::time_point deadline;  // of all the parses of the page
  std::vector<Block> blocks;
  std::vector<std::string> runs;
  bool needs_alignment = false;

  void parse(const std::string& language);
  std::string decoded_text(const std::string& piece) const;
  void collect(const GumboNode* root, std::vector<std::vector<Atom>>& out) const;
  void add_text(size_t begin, size_t end, const std::string& text, std::vector<Atom>& out) const;
  bool finish(Block& block) const;
  void split(Block& block, const std::string& language);
};

// The text of `html` as Gumbo decodes it (entities, CR LF), for a piece of a text node.
std::string HtmlDocument::Impl::decoded_text(const std::string& piece) const {
  const std::string html = "<div>" + piece;
  const document::GumboParse parse(html.data(), html.size(), document::html_memory_budget(html.size(), limits),
                                   limits.max_memory_all_parses, deadline, limits.max_seconds);
  std::string text;
  std::vector<const GumboNode*> stack = {parse.output().root};
  while (!stack.empty()) {
    const GumboNode* node = stack.back();
    stack.pop_back();
    if (node->type == GUMBO_NODE_TEXT || node->type == GUMBO_NODE_WHITESPACE) text += node->v.text.text;
    if (node->type != GUMBO_NODE_ELEMENT) continue;
    const GumboVector& children = node->v.element.children;
    for (unsigned i = children.length; i > 0; --i) stack.push_back(static_cast<const GumboNode*>(children.data[i - 1]));
  }
  return text;
}

// A text node. Gumbo merges the text on both sides of a tag it ignores (a stray end tag) into
// one node whose source range covers the tag: such a node is cut at the tag, which is kept as
// a point (when the pieces decode to the node's text; otherwise the "<" was text, as in <title>).
void HtmlDocument::Impl::add_text(size_t begin, size_t end, const std::string& text, std::vector<Atom>& out) const {
  std::vector<Atom> pieces;
  size_t at = begin;
  std::string joined;
  // The text source[from, to) as a piece of its own, entities decoded.
  const auto add_piece = [&](size_t from, size_t to) {
    Atom piece;
    piece.begin = from;
    piece.end = to;
    piece.text = decoded_text(source.substr(from, to - from));
    joined += piece.text;
    pieces.push_back(std::move(piece));
  };
  for (size_t i = begin; i + 1 < end; ++i) {
    const char next = source[i + 1];
    if (source[i] != '<' ||
        !(std::isalpha(static_cast<unsigned char>(next)) || next == '/' || next == '!' || next == '?'))
      continue;
    size_t stop;
    if (source.compare(i, 4, "<!--") == 0) {
      const size_t close = source.find("-->", i + 4);
      stop = close == std::string::npos || close + 3 > end ? end : close + 3;
    } else {
      const size_t close = source.find('>', i + 1);
      stop = close == std::string::npos || close >= end ? end : close + 1;
    }
    if (i > at) add_piece(at, i);
    pieces.push_back(point_atom(i, stop));
    at = stop;
    i = stop - 1;
  }
  if (!pieces.empty() && at < end) add_piece(at, end);
  if (pieces.empty() || joined != text) {
    Atom whole;
    whole.begin = begin;
    whole.end = end;
    whole.text = text;
    out.push_back(std::move(whole));
    return;
  }
  for (Atom& piece : pieces) out.push_back(std::move(piece));
}

// Walks the tree (an explicit stack: deep input must not exhaust the thread's stack) and cuts
// it into the atom lists of blocks.
void HtmlDocument::Impl::collect(const GumboNode* root, std::vector<std::vector<Atom>>& out) const {
  const char* base = source.data();
  const size_t size = source.size();
  std::vector<Atom> current;
  int elements = 0;
  const auto flush = [&] {
    if (!current.empty()) out.push_back(std::move(current));
    current.clear();
  };
  // A stack entry is a node to enter, or (node, true) for the end of an inline element.
  struct Entry {
    const GumboNode* node;
    bool leave;
    int element;
  };
  std::vector<Entry> stack = {{root, false, -1}};
  while (!stack.empty()) {
    const Entry entry = stack.back();
    stack.pop_back();
    const GumboNode* node = entry.node;
    if (entry.leave) {
      if (node == nullptr) {
        flush();  // end of a block-level element
        continue;
      }
      Atom close;
      close.kind = Atom::kClose;
      close.element = entry.element;
      if (own_tags(node)) source_range(node->v.element.original_end_tag, base, size, close.begin, close.end);
      current.push_back(close);
      continue;
    }
    size_t b = 0, e = 0;
    switch (node->type) {
      case GUMBO_NODE_TEXT:
      case GUMBO_NODE_WHITESPACE:
      case GUMBO_NODE_CDATA:
        if (source_range(node->v.text.original_text, base, size, b, e)) add_text(b, e, node->v.text.text, current);
        continue;
      case GUMBO_NODE_COMMENT:
        if (source_range(node->v.text.original_text, base, size, b, e)) current.push_back(point_atom(b, e));
        continue;
      case GUMBO_NODE_DOCUMENT: break;
      case GUMBO_NODE_ELEMENT:
      case GUMBO_NODE_TEMPLATE: {
        const Role role = role_of(node);
        if (role == Role::kInline) {
          Atom open;
          open.kind = Atom::kOpen;
          open.element = elements++;
          if (own_tags(node)) source_range(node->v.element.original_tag, base, size, open.begin, open.end);
          current.push_back(open);
          stack.push_back({node, true, open.element});
          break;
        }
        if (role == Role::kVoid || role == Role::kBreak || role == Role::kOpaque) {
          const bool placed = role == Role::kOpaque
                                  ? subtree_range(node, base, size, b, e)
                                  : own_tags(node) && source_range(node->v.element.original_tag, base, size, b, e);
          Atom point = placed ? point_atom(b, e) : point_atom(0, 0);  // (0, 0): no source bytes
          point.hard_break = role == Role::kBreak;
          current.push_back(point);
          continue;
        }
        flush();
        if (role == Role::kSkipped) continue;
        stack.push_back({nullptr, true, -1});
        break;
      }
    }
    const GumboVector& children = children_of(node);
    for (unsigned i = children.length; i > 0; --i)
      stack.push_back({static_cast<const GumboNode*>(children.data[i - 1]), false, -1});
  }
  flush();
}

// Checks that a block's atoms lie in source order, adds the bytes between them (tags the parser
// dropped) as points, pairs the tags and places everything on the block's text. False when the
// order is not the source's.
bool HtmlDocument::Impl::finish(Block& block) const {
  std::vector<Atom> atoms;
  bool started = false;
  size_t last = 0;
  for (Atom& atom : block.atoms) {
    if (atom.begin == atom.end) {  // no source bytes
      atoms.push_back(std::move(atom));
      continue;
    }
    if (started && atom.begin < last) return false;
    if (started && atom.begin > last) {
      atoms.push_back(point_atom(last, atom.begin));  // bytes the parser dropped
    }
    if (!started) block.begin = atom.begin;
    started = true;
    last = atom.end;
    atoms.push_back(std::move(atom));
  }
  if (!started) return false;
  block.end = last;
  block.atoms = std::move(atoms);

  // Pair the tags: an element whose other tag lies in another block is a point here.
  std::vector<int> open_at, close_at;
  for (size_t i = 0; i < block.atoms.size(); ++i) {
    const Atom& atom = block.atoms[i];
    if (atom.kind != Atom::kOpen && atom.kind != Atom::kClose) continue;
    std::vector<int>& at = atom.kind == Atom::kOpen ? open_at : close_at;
    if (at.size() <= static_cast<size_t>(atom.element)) at.resize(static_cast<size_t>(atom.element) + 1, -1);
    at[static_cast<size_t>(atom.element)] = static_cast<int>(i);
  }
  std::vector<int> element_of(std::max(open_at.size(), close_at.size()), -1);
  std::vector<int> stack;
  block.point_parent.assign(block.atoms.size(), -1);
  for (size_t i = 0; i < block.atoms.size(); ++i) {
    Atom& atom = block.atoms[i];
    atom.at = block.text.size();
    const int parent = stack.empty() ? -1 : stack.back();
    block.point_parent[i] = parent;
    if (atom.kind == Atom::kText) {
      block.text += atom.text;
      continue;
    }
    if (atom.kind == Atom::kPoint) continue;
    const size_t id = static_cast<size_t>(atom.element);
    const bool paired = id < open_at.size() && id < close_at.size() && open_at[id] >= 0 && close_at[id] >= 0;
    if (!paired) {
      atom.kind = Atom::kPoint;
      continue;
    }
    if (atom.kind == Atom::kOpen) {
      Element element;
      element.parent = parent;
      element.open = i;
      element.a = atom.at;
      element_of[id] = static_cast<int>(block.elements.size());
      stack.push_back(element_of[id]);
      block.elements.push_back(element);
    } else {
      if (stack.empty() || stack.back() != element_of[id]) return false;
      stack.pop_back();
      Element& element = block.elements[static_cast<size_t>(element_of[id])];
      element.close = i;
      element.b = atom.at;
    }
  }
  return stack.empty();
}

// The block's sentences: the text between hard breaks cut with ICU's rules; sentences with no
// words are left as text.
void HtmlDocument::Impl::split(Block& block, const std::string& language) {
  std::vector<size_t> cuts = {0};
  for (const Atom& atom : block.atoms)
    if (atom.kind == Atom::kPoint && atom.hard_break) cuts.push_back(atom.at);
  cuts.push_back(block.text.size());
  block.first_run = runs.size();
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    if (cuts[c + 1] <= cuts[c]) continue;
    const std::string part = block.text.substr(cuts[c], cuts[c + 1] - cuts[c]);
    std::vector<SentenceSpan> spans;
    try {
      spans = split_sentences(part, language);
    } catch (const std::exception&) {  // not expected (Gumbo's text is valid UTF-8): the part whole
      spans.clear();
      size_t a = 0, b = part.size();
      while (a < b && is_space(part[a])) ++a;
      while (b > a && is_space(part[b - 1])) --b;
      if (a < b) spans.push_back({a, b});
    }
    for (const SentenceSpan& span : spans) {
      if (span.begin >= span.end || span.end > part.size()) continue;
      std::string sentence = part.substr(span.begin, span.end - span.begin);
      if (!has_words(sentence)) continue;
      // White space in HTML text is only a separator: the model sees single spaces.
      std::string collapsed;
      for (char ch : sentence) {
        if (is_space(ch)) {
          if (collapsed.empty() || collapsed.back() != ' ') collapsed += ' ';
        } else {
          collapsed += ch;
        }
      }
      sentence = std::move(collapsed);
      block.sentences.push_back({cuts[c] + span.begin, cuts[c] + span.end});
      runs.push_back(std::move(sentence));
    }
  }
}

void HtmlDocument::Impl::parse(const std::string& language) {
  document::check_html_limits(source, limits);
  deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                    std::chrono::duration<double>(std::min(limits.max_seconds, 1e6)));
  const document::GumboParse parsed(source.data(), source.size(), document::html_memory_budget(source.size(), limits),
                                    limits.max_memory_all_parses, deadline, limits.max_seconds);
  std::vector<std::vector<Atom>> lists;
  collect(parsed.output().document, lists);
  std::vector<Block> candidates;
  for (std::vector<Atom>& atoms : lists) {
    bool has_text = false;
    for (const Atom& atom : atoms) has_text = has_text || (atom.kind == Atom::kText && atom.begin < atom.end);
    if (!has_text) continue;
    Block block;
    block.atoms = atoms;
    // Placing the markup of a block costs (its tags and points) x (its words): a block of more
    // than kMaxBlockAtoms pieces (a paragraph of thousands of <b>w</b>) is translated text node
    // by text node instead, which is linear.
    if (atoms.size() <= kMaxBlockAtoms && finish(block)) {
      candidates.push_back(std::move(block));
      continue;
    }
    // Reordered by error repair (or too large): each text node on its own.
    for (const Atom& atom : atoms) {
      if (atom.kind != Atom::kText || atom.begin == atom.end) continue;
      Block single;
      single.atoms = {atom};
      if (finish(single)) candidates.push_back(std::move(single));
    }
  }
  // Replace in source order; a block overlapping another is left alone.
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Block& x, const Block& y) { return x.begin < y.begin; });
  size_t last_end = 0;
  for (Block& block : candidates) {
    if (block.begin < last_end) continue;
    split(block, language);
    if (block.sentences.empty()) continue;
    last_end = block.end;
    for (const Atom& atom : block.atoms)
      if (atom.kind != Atom::kText) {
        const bool inside = std::any_of(block.sentences.begin(), block.sentences.end(),
                                        [&](const SentenceSpan& s) { return atom.at > s.begin && atom.at < s.end; });
        needs_alignment = needs_alignment || inside || !block.elements.empty();
      }
    blocks.push_back(std::move(block));
  }
}

HtmlDocument::HtmlDocument(const std::string& html, const std::string& language, const HtmlLimits& limits)
    : impl_(std::make_unique<Impl>()) {
  impl_->source = html;
  impl_->limits = limits;
  impl_->parse(language);
}
HtmlDocument::~HtmlDocument() = default;
HtmlDocument::HtmlDocument(HtmlDocument&&) noexcept = default;
HtmlDocument& HtmlDocument::operator=(HtmlDocument&&) noexcept = default;

const std::vector<std::string>& HtmlDocument::sentences() const { return impl_->runs; }
bool HtmlDocument::needs_alignment() const { return impl_->needs_alignment; }

std::string HtmlDocument::rebuild(const std::vector<AlignedTranslation>& translations) const {
  const std::string& source = impl_->source;
  std::string out;
  out.reserve(source.size() + source.size() / 4);
  size_t pos = 0;
  for (const Block& block : impl_->blocks) {
    out.append(source, pos, block.begin - pos);
    document::rebuild_block(source, block, translations, out);
    pos = block.end;
  }
  out.append(source, pos, std::string::npos);
  return out;
}

}  // namespace ordo
