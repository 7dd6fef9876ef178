#include "pipeline/term_placement.h"

#include <algorithm>

#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include "ordo/alignment.h"
#include "pipeline/result_building.h"
#include "text/icu_text.h"

namespace ordo::pipeline {
namespace {

// The source positions before the end of `text`: its encoding without the ids after the text.
size_t positions_before(const text::Tokenizer& tokenizer, const SourceEncoding& encoding, const std::string& text) {
  const std::string whole = encoding.task_prefix + text;
  const std::vector<int64_t> ids =
      encoding.source_lang.empty() ? tokenizer.encode(whole) : tokenizer.encode(whole, encoding.source_lang);
  const size_t after = static_cast<size_t>(tokenizer.framing().after);
  return ids.size() > after ? ids.size() - after : 0;
}

// Whether a piece holds a letter or digit (not only punctuation, or a word-start marker).
bool has_word_character(const std::string& piece) {
  const icu::UnicodeString u = text::icu_text::from_utf8(piece);
  for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1))
    if (u_isalnum(u.char32At(i)) && u.char32At(i) != 0x2581) return true;
  return false;
}

// `term` with its first letter made upper case, as the sentence's first word it replaces was.
std::string with_case_of(const std::string& term, const std::string& replaced) {
  const icu::UnicodeString t = text::icu_text::from_utf8(term), r = text::icu_text::from_utf8(replaced);
  if (t.isEmpty() || r.isEmpty() || !u_isupper(r.char32At(0)) || !u_islower(t.char32At(0))) return term;
  icu::UnicodeString out;
  out.append(static_cast<UChar32>(u_toupper(t.char32At(0)))).append(t, t.moveIndex32(0, 1), INT32_MAX);
  return text::icu_text::to_utf8(out);
}

// The words of a term: its runs of characters between spaces.
size_t count_words(const std::string& term) {
  size_t words = 0;
  bool in_word = false;
  for (char c : term) {
    const bool space = c == ' ' || c == '\t';
    words += !space && !in_word;
    in_word = !space;
  }
  return words;
}

// A token range [begin, end) of a hypothesis' text tokens (Hypothesis::tokens).
struct Span {
  size_t begin = 0, end = 0;
  std::string target;
};

// How much target position `t` attends to source position `s`: the mean over every layer and
// head. Measured on the bundled translators (tools/glossary/measure.py), the mean finds the
// model's own word for a term more often than any one layer: the alignment layer alone
// (Attention::aligned) often picks the article before a noun in a 3-layer decoder.
float attended(const Attention& a, int64_t t, size_t s) {
  float sum = 0.0f;
  for (int64_t l = 0; l < a.layers; ++l)
    for (int64_t h = 0; h < a.heads; ++h) sum += a.at(l, h, t, static_cast<int64_t>(s));
  return sum / static_cast<float>(std::max<int64_t>(1, a.layers * a.heads));
}

// A word planned before it is written: a target word holding at least this share of the mass
// of the best word before it is taken instead. An article or adjective is written before its
// noun but already looks at the noun's source word (a/an, der/die/das agree with it); on the
// bundled translators' term lists it often outweighs the noun itself in a 3-layer decoder.
constexpr float kPlannedShare = 0.7f;
// Another target word written like the chosen one, holding at least this share of its mass,
// repeats the model's own word for the same source word: it gets the term too.
constexpr float kRepeatShare = 0.5f;
// A target term of several words for a source term of one may stand for a translation of as
// many ("Bahnhof" -> "train station" -> "railway station"): the neighbours holding at least
// this share of the best word's mass join the span, up to the term's number of words.
constexpr float kNeighbourShare = 0.5f;

// The letters of target word `w` (its pieces without word markers and punctuation), folded.
std::string word_letters(const Hypothesis& hyp, const std::vector<int64_t>& target_words, int64_t w) {
  icu::UnicodeString letters;
  for (size_t k = 0; k < hyp.tokens.size(); ++k) {
    if (target_words[k] != w) continue;
    const icu::UnicodeString u = text::icu_text::from_utf8(hyp.tokens[k]);
    for (int32_t i = 0; i < u.length(); i = u.moveIndex32(i, 1))
      if (u_isalnum(u.char32At(i))) letters.append(u.char32At(i));
  }
  return text::icu_text::to_utf8(letters.foldCase());
}

// Target words `from` to `to` as a token range, without punctuation at its ends; none if only
// punctuation is left.
void add_span(std::vector<Span>& spans, const Hypothesis& hyp, const std::vector<int64_t>& target_words, int64_t from,
              int64_t to) {
  Span span;
  span.begin = static_cast<size_t>(std::find(target_words.begin(), target_words.end(), from) - target_words.begin());
  span.end = static_cast<size_t>(std::find(target_words.begin(), target_words.end(), to + 1) - target_words.begin());
  while (span.end > span.begin && !has_word_character(hyp.tokens[span.end - 1])) --span.end;
  while (span.begin < span.end && !has_word_character(hyp.tokens[span.begin])) ++span.begin;
  if (span.begin < span.end) spans.push_back(span);
}

// The target words that translate one match, as token ranges: each source word of the match
// picks the target word whose tokens look at it most (the cross-attention averaged over every
// layer and head); the span runs from the first picked word to the last (the single best one
// when they lie far apart), without punctuation at its ends. When they all pick one word, the
// span may move to the next word (kPlannedShare), grow to the target term's number of words
// (kNeighbourShare), or, still one word, be repeated where the model repeated it (kRepeatShare).
std::vector<Span> spans_of(const TranslationResult& result, const Hypothesis& hyp, size_t source_begin,
                           size_t source_end, const std::vector<int64_t>& target_words, size_t target_words_of_term) {
  std::vector<std::string> pieces;
  for (size_t p = source_begin; p < source_end; ++p) pieces.push_back(result.source_tokens[p]);
  const std::vector<int64_t> source_words = word_indices(pieces);
  const int64_t word_count = target_words.empty() ? 0 : target_words.back() + 1;
  int64_t first = word_count, last = -1, best = 0;
  std::vector<float> best_mass;
  for (int64_t w = 0; w <= source_words.back(); ++w) {
    std::vector<float> mass(static_cast<size_t>(word_count), 0.0f);
    for (size_t k = 0; k < hyp.tokens.size(); ++k) {
      float sum = 0.0f;
      for (size_t p = 0; p < pieces.size(); ++p)
        if (source_words[p] == w) sum += attended(hyp.attention, hyp.token_positions[k], source_begin + p);
      float& m = mass[static_cast<size_t>(target_words[k])];
      m = std::max(m, sum);
    }
    const int64_t pick = std::max_element(mass.begin(), mass.end()) - mass.begin();
    first = std::min(first, pick);
    last = std::max(last, pick);
    if (best_mass.empty() || mass[static_cast<size_t>(pick)] > best_mass[static_cast<size_t>(best)])
      best_mass = mass, best = pick;
  }
  const auto mass_of = [&](int64_t w) { return best_mass[static_cast<size_t>(w)]; };
  if (last - first > source_words.back() + 1) first = last = best;
  std::vector<int64_t> words;  // one-word spans, the first one chosen
  if (first == last) {
    if (first + 1 < word_count && mass_of(first + 1) >= kPlannedShare * mass_of(first) &&
        !word_letters(hyp, target_words, first + 1).empty())
      first = last = first + 1;
    for (size_t n = 1; n < target_words_of_term; ++n) {
      const float left = first > 0 ? mass_of(first - 1) : -1.0f;
      const float right = last + 1 < word_count ? mass_of(last + 1) : -1.0f;
      const int64_t next = right >= left ? last + 1 : first - 1;
      if (std::max(left, right) < kNeighbourShare * mass_of(best) || word_letters(hyp, target_words, next).empty())
        break;
      (next > last ? last : first) = next;
    }
    if (first != last) {
      std::vector<Span> spans;
      add_span(spans, hyp, target_words, first, last);
      return spans;
    }
    const std::string letters = word_letters(hyp, target_words, first);
    words.push_back(first);
    for (int64_t w = 0; w < word_count; ++w)
      if (w != first && !letters.empty() && mass_of(w) >= kRepeatShare * mass_of(first) &&
          word_letters(hyp, target_words, w) == letters)
        words.push_back(w);
  }
  std::vector<Span> spans;
  if (words.empty()) add_span(spans, hyp, target_words, first, last);
  for (int64_t w : words) add_span(spans, hyp, target_words, w, w);
  return spans;
}

// The attention rows of `a` for new ids: rows [0, at) and [at + removed, end) kept, the `added`
// new rows in between copies of row `at` (the term looks where the words it replaces looked).
void splice_rows(Attention& a, size_t at, size_t removed, size_t added) {
  const size_t source = static_cast<size_t>(a.source_length), rows = static_cast<size_t>(a.target_length);
  const auto splice = [&](const std::vector<float>& in, size_t matrices) {
    std::vector<float> out;
    const size_t new_rows = rows - removed + added;
    out.reserve(matrices * new_rows * source);
    for (size_t m = 0; m < matrices; ++m) {
      const float* base = in.data() + m * rows * source;
      out.insert(out.end(), base, base + at * source);
      for (size_t r = 0; r < added; ++r) out.insert(out.end(), base + at * source, base + (at + 1) * source);
      out.insert(out.end(), base + (at + removed) * source, base + rows * source);
    }
    return out;
  };
  a.weights = splice(a.weights, static_cast<size_t>(a.layers * a.heads));
  a.averaged = splice(a.averaged, 1);
  a.target_length = static_cast<int64_t>(rows - removed + added);
}

void place_in(const text::Tokenizer& tokenizer, const TranslationResult& result,
              const std::vector<std::pair<size_t, size_t>>& sources, const std::vector<Glossary::Match>& matches,
              Hypothesis& hyp) {
  if (hyp.attention.empty() || hyp.tokens.empty()) return;
  const std::vector<int64_t> target_words = word_indices(hyp.tokens);
  std::vector<Span> spans;  // apart: a span overlapping one taken before is left out
  for (size_t m = 0; m < matches.size(); ++m) {
    if (sources[m].first >= sources[m].second) continue;
    const size_t term_words = count_words(matches[m].target);
    for (Span& span : spans_of(result, hyp, sources[m].first, sources[m].second, target_words, term_words)) {
      if (std::any_of(spans.begin(), spans.end(),
                      [&](const Span& s) { return span.begin < s.end && s.begin < span.end; }))
        continue;
      span.target = matches[m].target;
      spans.push_back(span);
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin > b.begin; });
  std::vector<int64_t> ids = hyp.ids;
  for (const Span& span : spans) {  // the last first: the earlier positions stay valid
    const size_t from = static_cast<size_t>(hyp.token_positions[span.begin]);
    const size_t to = static_cast<size_t>(hyp.token_positions[span.end - 1]) + 1;
    const std::vector<int64_t> before(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(from));
    const std::string before_text = tokenizer.decode(before);
    std::string replaced =
        tokenizer.decode(std::vector<int64_t>(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(to)));
    replaced = replaced.compare(0, before_text.size(), before_text) == 0 ? replaced.substr(before_text.size()) : "";
    const size_t word_start = replaced.find_first_not_of(' ');
    const std::string space = replaced.substr(0, std::min(word_start, replaced.size()));
    const std::string term = span.begin == 0 ? with_case_of(span.target, replaced.substr(space.size())) : span.target;
    // The term's ids as they continue `before` with the space the replaced words had: a
    // tokenizer that marks a word's start in its first piece (SentencePiece's "▁") encodes the
    // term alone; one that carries the space in it (byte-level BPE) needs it given.
    // Neither continuing it so: the term alone.
    std::vector<int64_t> term_ids;
    bool first = true;
    for (const std::string& text : {term, " " + term}) {
      std::vector<int64_t> candidate = tokenizer.encode_target(text), joined = before;
      joined.insert(joined.end(), candidate.begin(), candidate.end());
      const bool continues = tokenizer.decode(joined) == before_text + space + term;
      if (first || continues) term_ids = std::move(candidate);
      first = false;
      if (continues) break;
    }
    if (term_ids.empty()) continue;
    ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(from), ids.begin() + static_cast<std::ptrdiff_t>(to));
    ids.insert(ids.begin() + static_cast<std::ptrdiff_t>(from), term_ids.begin(), term_ids.end());
    splice_rows(hyp.attention, from, to - from, term_ids.size());
  }
  if (spans.empty()) return;
  hyp.ids = ids;
  hyp.tokens = tokenizer.id_to_pieces(ids);
  hyp.text = tokenizer.decode(ids);
  label_ids(tokenizer, hyp);
}

}  // namespace

void place_terms(const text::Tokenizer& tokenizer, const SourceEncoding& encoding, const std::string& sentence,
                 const std::vector<Glossary::Match>& matches, TranslationResult& result) {
  if (result.source_tokens.empty()) return;  // no attention: nothing says where the words are
  // Each match's source positions: those of the text before its end that are not before it.
  // Sources cut to the model's length keep their final ids; a match past the cut is left out.
  const size_t text_end = result.source_tokens.size() - static_cast<size_t>(tokenizer.framing().after);
  std::vector<std::pair<size_t, size_t>> sources;
  for (const Glossary::Match& m : matches) {
    // Without the spaces before the term: a tokenizer may give a trailing space a piece of
    // its own, which in the whole sentence is part of the term's first piece ("▁Bahnhof").
    const size_t kept = sentence.find_last_not_of(" \t\r\n", m.begin == 0 ? std::string::npos : m.begin - 1);
    const std::string before = m.begin == 0 || kept == std::string::npos ? "" : sentence.substr(0, kept + 1);
    const size_t begin = positions_before(tokenizer, encoding, before);
    const size_t end = std::min(positions_before(tokenizer, encoding, sentence.substr(0, m.end)), text_end);
    sources.emplace_back(std::min(begin, end), end);
  }
  for (Hypothesis& hyp : result.hypotheses) place_in(tokenizer, result, sources, matches, hyp);
}

}  // namespace ordo::pipeline
