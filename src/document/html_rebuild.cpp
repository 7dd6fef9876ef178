// One block of an HTML page written back with its translations (html_layout.h): the inline
// markup of the source block is placed around the target words its source words align to.
// The steps, each a function below:
//   1. translated_text(): the block's text with each sentence replaced by its translation,
//      where each piece came from, and each sentence's word links (the model's alignment, or
//      relative position when it gave none);
//   2. place_point(): where a point of the source text (a tag, a comment) goes in the target;
//   3. element_interval(): the target text an inline element wraps (the hull of its aligned
//      words, punctuation it did not cover left out);
//   4. children_by_parent(): the elements and points as a tree, in source order;
//   5. emit_tree() / emit_text(): the tree written out, children kept inside their parent and
//      apart from their siblings, untranslated text as the source wrote it.
// html_layout.cpp's header comment gives the rules; this file only moves bytes.
#include <algorithm>
#include <cctype>
#include <utility>

#include "document/html_layout.h"

namespace ordo::document {
namespace {

// The target words (of m) at the place of source word i (of n > 0): at least one when m > 0.
std::vector<size_t> same_relative_place(size_t i, size_t n, size_t m) {
  std::vector<size_t> out;
  const size_t from = i * m / n, to = std::max(from + 1, (i + 1) * m / n);
  for (size_t j = from; j < to && j < m; ++j) out.push_back(j);
  return out;
}

// Punctuation a word can carry that an inline element around the word need not: . , ; : ! ?
// quotes, brackets, dashes, ellipsis.
bool is_punctuation(uint32_t cp) {
  if (cp < 0x80) return cp > 0x20 && std::ispunct(static_cast<int>(cp));
  return cp == 0xAB || cp == 0xBB || (cp >= 0x2010 && cp <= 0x2027) || (cp >= 0x3001 && cp <= 0x3011) || cp == 0xFF0C ||
         cp == 0xFF0E || cp == 0xFF01 || cp == 0xFF1F;
}

// Start of the UTF-8 character that ends at `end`.
size_t previous_char(const std::string& text, size_t end) {
  size_t i = end - 1;
  while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  return i;
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

// Words of text[begin, end): runs of non-space bytes.
std::vector<SentenceSpan> words_of(const std::string& text, size_t begin, size_t end) {
  std::vector<SentenceSpan> words;
  for (size_t i = begin; i < end;) {
    while (i < end && is_space(text[i])) ++i;
    if (i >= end) break;
    const size_t start = i;
    while (i < end && !is_space(text[i])) ++i;
    words.push_back({start, i});
  }
  return words;
}

// The translated block's text and where everything of the source text went.
struct Target {
  std::string text;  // unescaped
  struct Segment {
    bool keep;  // source text copied (else a translation)
    size_t o_begin, o_end;
    size_t b_begin;  // keep: where it starts in the block's text
  };
  std::vector<Segment> segments;
  struct Sentence {
    size_t o_begin, o_end;
    std::vector<SentenceSpan> source_words;       // in the block's text
    std::vector<SentenceSpan> target_words;       // in `text`
    std::vector<std::vector<size_t>> targets_of;  // source word -> target words
  };
  std::vector<Sentence> sentences;
};

// Source word -> target words of one sentence of n source and m target words (both > 0).
std::vector<std::vector<size_t>> word_links(const AlignedTranslation& tr, size_t n, size_t m) {
  std::vector<std::vector<size_t>> targets_of(n);
  // The model's words and ours (cut at white space) are the same in the usual case;
  // otherwise indices are scaled.
  const auto scale = [](int64_t index, int64_t theirs, size_t ours) {
    if (theirs <= 0 || static_cast<size_t>(theirs) == ours) return static_cast<size_t>(index);
    return std::min(ours - 1, static_cast<size_t>(index * static_cast<int64_t>(ours) / theirs));
  };
  if (!tr.words.empty()) {
    for (const AlignmentLink& link : tr.words) {
      if (link.source < 0 || link.target < 0) continue;
      const size_t i = scale(link.source, tr.source_words, n), j = scale(link.target, tr.target_words, m);
      if (i < n && j < m) targets_of[i].push_back(j);
    }
  } else {
    for (size_t i = 0; i < n; ++i)  // no alignment: by relative position
      for (size_t j : same_relative_place(i, n, m)) targets_of[i].push_back(j);
  }
  return targets_of;
}

// Step 1: the block's text with its sentences translated.
Target translated_text(const Block& block, const std::vector<AlignedTranslation>& translations) {
  const std::string& text = block.text;
  Target target;
  size_t copied = 0;
  const auto keep = [&](size_t to) {
    if (to > copied) {
      target.segments.push_back({true, target.text.size(), target.text.size() + (to - copied), copied});
      target.text.append(text, copied, to - copied);
    }
  };
  for (size_t s = 0; s < block.sentences.size(); ++s) {
    const SentenceSpan& span = block.sentences[s];
    keep(span.begin);
    const size_t run = block.first_run + s;
    static const AlignedTranslation kNone;
    const AlignedTranslation& tr = run < translations.size() ? translations[run] : kNone;
    Target::Sentence sentence;
    sentence.o_begin = target.text.size();
    target.text += tr.text;
    sentence.o_end = target.text.size();
    target.segments.push_back({false, sentence.o_begin, sentence.o_end, 0});
    sentence.source_words = words_of(text, span.begin, span.end);
    sentence.target_words = words_of(target.text, sentence.o_begin, sentence.o_end);
    const size_t n = sentence.source_words.size(), m = sentence.target_words.size();
    sentence.targets_of.assign(n, {});
    if (n > 0 && m > 0) sentence.targets_of = word_links(tr, n, m);
    target.sentences.push_back(std::move(sentence));
    copied = span.end;
  }
  keep(text.size());
  return target;
}

// Step 2: where a point at offset p of the block's text goes in the target text.
size_t place_point(const Block& block, const Target& target, size_t p) {
  size_t o = 0;
  for (const Target::Segment& seg : target.segments)
    if (seg.keep && p >= seg.b_begin && p <= seg.b_begin + (seg.o_end - seg.o_begin))
      return seg.o_begin + (p - seg.b_begin);
  for (size_t s = 0; s < block.sentences.size(); ++s) {
    const SentenceSpan& span = block.sentences[s];
    const Target::Sentence& ts = target.sentences[s];
    if (p <= span.begin) return ts.o_begin;
    if (p >= span.end) {
      o = ts.o_end;
      continue;
    }
    const auto& words = ts.source_words;
    size_t k = 0;
    while (k < words.size() && words[k].end <= p) ++k;
    // Touching the word before it ("word</b> next", "end<br>"): after that word's translation.
    if (k > 0 && words[k - 1].end == p && !ts.targets_of[k - 1].empty()) {
      const size_t j = *std::max_element(ts.targets_of[k - 1].begin(), ts.targets_of[k - 1].end());
      return ts.target_words[j].end;
    }
    if (k == words.size()) return ts.o_end;
    if (k == 0 && p <= words[0].begin) return ts.o_begin;
    if (!ts.targets_of[k].empty()) {
      const size_t j = *std::min_element(ts.targets_of[k].begin(), ts.targets_of[k].end());
      return ts.target_words[j].begin;
    }
    // Unaligned: the same relative place, at a word start.
    const size_t q = ts.o_begin + (p - span.begin) * (ts.o_end - ts.o_begin) / (span.end - span.begin);
    for (const SentenceSpan& w : ts.target_words)
      if (w.begin >= q) return w.begin;
    return ts.o_end;
  }
  return o;
}

// Punctuation the target words [lo, hi) carry but the source element did not cover stays
// outside the element.
void leave_out_punctuation(const std::string& text, const Element& element, const std::string& target_text, size_t& lo,
                           size_t& hi) {
  size_t sa = element.a, sb = element.b;
  while (sa < sb && is_space(text[sa])) ++sa;
  while (sb > sa && is_space(text[sb - 1])) --sb;
  if (sa >= sb) return;
  if (!is_punctuation(code_point_at(text, previous_char(text, sb), nullptr)))
    while (hi > lo && is_punctuation(code_point_at(target_text, previous_char(target_text, hi), nullptr)))
      hi = previous_char(target_text, hi);
  if (!is_punctuation(code_point_at(text, sa, nullptr)))
    while (lo < hi) {
      size_t n = 1;
      if (!is_punctuation(code_point_at(target_text, lo, &n))) break;
      lo += n;
    }
}

// Step 3: the interval of the target text an inline element wraps.
std::pair<size_t, size_t> element_interval(const Block& block, const Target& target, const Element& element) {
  bool any = false;
  size_t lo = 0, hi = 0;
  const auto take = [&](size_t x, size_t y) {
    if (x >= y) return;
    lo = any ? std::min(lo, x) : x;
    hi = any ? std::max(hi, y) : y;
    any = true;
  };
  for (const Target::Segment& seg : target.segments) {
    if (!seg.keep) continue;
    const size_t b0 = seg.b_begin, b1 = seg.b_begin + (seg.o_end - seg.o_begin);
    const size_t x = std::max(b0, element.a), y = std::min(b1, element.b);
    if (x < y) take(seg.o_begin + (x - b0), seg.o_begin + (y - b0));
  }
  bool translated = false;
  for (const Target::Sentence& ts : target.sentences)
    for (size_t i = 0; i < ts.source_words.size(); ++i) {
      const SentenceSpan& w = ts.source_words[i];
      if (w.end <= element.a || w.begin >= element.b) continue;
      for (size_t j : ts.targets_of[i]) {
        take(ts.target_words[j].begin, ts.target_words[j].end);
        translated = true;
      }
    }
  if (!translated)  // its words align nowhere: the target words at the same relative place
    for (const Target::Sentence& ts : target.sentences) {
      const size_t n = ts.source_words.size(), m = ts.target_words.size();
      for (size_t i = 0; i < n && m > 0; ++i) {
        const SentenceSpan& w = ts.source_words[i];
        if (w.end <= element.a || w.begin >= element.b) continue;
        for (size_t j : same_relative_place(i, n, m)) {
          take(ts.target_words[j].begin, ts.target_words[j].end);
          translated = true;
        }
      }
    }
  if (!any) {
    const size_t at = place_point(block, target, element.a);
    return {at, at};
  }
  if (translated) {
    leave_out_punctuation(block.text, element, target.text, lo, hi);
    if (lo == hi) lo = hi = place_point(block, target, element.a);
  }
  return {lo, hi};
}

// An element or a point in the tree of a block's markup.
struct Child {
  bool element;
  size_t index;  // element index or atom index
  size_t start, end;
  bool space_after;  // points: followed by a space
};

// Step 4: the children of each element (and of the block, slot 0; element e is slot e + 1) in
// source order, with where they go in the target text.
std::vector<std::vector<Child>> children_by_parent(const Block& block, const Target& target,
                                                   const std::vector<std::pair<size_t, size_t>>& intervals) {
  const std::string& text = block.text;
  std::vector<std::vector<Child>> children(block.elements.size() + 1);
  const auto slot = [](int parent) { return static_cast<size_t>(parent + 1); };
  std::vector<int> element_at(block.atoms.size(), -1);  // open tag atom -> element
  for (size_t e = 0; e < block.elements.size(); ++e) element_at[block.elements[e].open] = static_cast<int>(e);
  for (size_t i = 0; i < block.atoms.size(); ++i) {
    const Atom& atom = block.atoms[i];
    if (atom.kind == Atom::kPoint) {
      const size_t q = place_point(block, target, atom.at);
      // Between spaces in the source ("Run <code>ls</code> now"): a space after it, too.
      const size_t p = atom.at;
      const bool spaced = p > 0 && p < text.size() && is_space(text[p - 1]) && is_space(text[p]) && q > 0 &&
                          q < target.text.size() && target.text[q - 1] == ' ' && !is_space(target.text[q]);
      children[slot(block.point_parent[i])].push_back({false, i, q, q, spaced});
    } else if (atom.kind == Atom::kOpen && element_at[i] >= 0) {
      const size_t e = static_cast<size_t>(element_at[i]);
      children[slot(block.elements[e].parent)].push_back({true, e, intervals[e].first, intervals[e].second, false});
    }
  }
  return children;
}

// Step 5a: the target text [x, y): translations escaped, source text as written where the
// bytes are known.
void emit_text(const std::string& source, const Block& block, const Target& target, size_t x, size_t y,
               std::string& out) {
  for (const Target::Segment& seg : target.segments) {
    const size_t from = std::max(x, seg.o_begin), to = std::min(y, seg.o_end);
    if (from >= to) continue;
    if (!seg.keep) {
      out += escape_html_text(target.text.substr(from, to - from));
      continue;
    }
    // Source text: as written where the bytes are known.
    const size_t b0 = seg.b_begin + (from - seg.o_begin), b1 = seg.b_begin + (to - seg.o_begin);
    for (const Atom& atom : block.atoms) {
      if (atom.kind != Atom::kText) continue;
      const size_t t0 = atom.at, t1 = atom.at + atom.text.size();
      const size_t x0 = std::max(b0, t0), x1 = std::min(b1, t1);
      if (x0 >= x1) continue;
      const bool raw_same = atom.end - atom.begin == atom.text.size() &&
                            source.compare(atom.begin, atom.end - atom.begin, atom.text) == 0;
      if (raw_same) {
        out.append(source, atom.begin + (x0 - t0), x1 - x0);
      } else if (x0 == t0 && x1 == t1) {
        out.append(source, atom.begin, atom.end - atom.begin);
      } else {
        std::string part = escape_html_text(atom.text.substr(x0 - t0, x1 - x0));
        // The parser turned the source's CR LF into LF.
        if (source.substr(atom.begin, atom.end - atom.begin).find("\r\n") != std::string::npos)
          for (size_t at = part.find('\n'); at != std::string::npos; at = part.find('\n', at + 2))
            part.insert(at, "\r");
        out += part;
      }
    }
  }
}

// Step 5b: the tree written out, children sorted by where they start in the target, kept
// inside their parent and apart from their siblings; an iterative walk over (element,
// cursor) frames.
void emit_tree(const std::string& source, const Block& block, const Target& target,
               const std::vector<std::vector<Child>>& children, std::string& out) {
  struct Frame {
    int element;
    size_t lo, hi, cursor, next;
    std::vector<Child> kids;
  };
  const auto make_frame = [&](int element, size_t lo, size_t hi) {
    Frame f{element, lo, hi, lo, 0, children[static_cast<size_t>(element + 1)]};
    std::stable_sort(f.kids.begin(), f.kids.end(), [](const Child& x, const Child& y) { return x.start < y.start; });
    return f;
  };
  std::vector<Frame> frames;
  frames.push_back(make_frame(-1, 0, target.text.size()));
  while (!frames.empty()) {
    Frame& f = frames.back();
    if (f.next == f.kids.size()) {
      if (f.hi > f.cursor) emit_text(source, block, target, f.cursor, f.hi, out);
      const int element = f.element;
      frames.pop_back();
      if (element >= 0) {
        const Atom& close = block.atoms[block.elements[static_cast<size_t>(element)].close];
        out.append(source, close.begin, close.end - close.begin);
        if (!frames.empty()) frames.back().cursor = std::max(frames.back().cursor, f.hi);
      }
      continue;
    }
    Child child = f.kids[f.next++];
    if (!child.element) {
      const size_t q = std::min(std::max(child.start, f.cursor), f.hi);
      if (q > f.cursor) emit_text(source, block, target, f.cursor, q, out);
      f.cursor = q;
      const Atom& point = block.atoms[child.index];
      out.append(source, point.begin, point.end - point.begin);
      if (child.space_after) out += ' ';
      continue;
    }
    const size_t s = std::min(std::max(child.start, f.cursor), f.hi);
    const size_t e = std::min(std::max(child.end, s), f.hi);
    if (s > f.cursor) emit_text(source, block, target, f.cursor, s, out);
    f.cursor = e;
    const Atom& open = block.atoms[block.elements[child.index].open];
    out.append(source, open.begin, open.end - open.begin);
    frames.push_back(make_frame(static_cast<int>(child.index), s, e));
  }
}

}  // namespace

void rebuild_block(const std::string& source, const Block& block, const std::vector<AlignedTranslation>& translations,
                   std::string& out) {
  const Target target = translated_text(block, translations);
  std::vector<std::pair<size_t, size_t>> intervals;
  intervals.reserve(block.elements.size());
  for (const Element& element : block.elements) intervals.push_back(element_interval(block, target, element));
  emit_tree(source, block, target, children_by_parent(block, target, intervals), out);
}

}  // namespace ordo::document
