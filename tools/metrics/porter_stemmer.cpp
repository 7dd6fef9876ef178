#include "metrics/porter_stemmer.h"

#include <unordered_map>

namespace ordo::metrics {
namespace {

// The paper's terms: a consonant is a letter other than a, e, i, o, u and other than a y
// that follows a consonant; m (the "measure") counts the vowel-consonant transitions.
bool is_consonant(std::string_view w, std::size_t i) {
  switch (w[i]) {
    case 'a':
    case 'e':
    case 'i':
    case 'o':
    case 'u': return false;
    case 'y': return i == 0 || !is_consonant(w, i - 1);
    default: return true;
  }
}

int measure(std::string_view stem) {
  int m = 0;
  for (std::size_t i = 1; i < stem.size(); ++i)
    if (!is_consonant(stem, i - 1) && is_consonant(stem, i)) ++m;
  return m;
}

bool has_vowel(std::string_view stem) {
  for (std::size_t i = 0; i < stem.size(); ++i)
    if (!is_consonant(stem, i)) return true;
  return false;
}

bool ends_double_consonant(std::string_view w) {
  return w.size() >= 2 && w.back() == w[w.size() - 2] && is_consonant(w, w.size() - 1);
}

// *o: consonant-vowel-consonant at the end, the last not w, x or y; NLTK also accepts a
// whole 2-letter stem vowel-consonant.
bool ends_cvc(std::string_view w) {
  const std::size_t n = w.size();
  if (n >= 3 && is_consonant(w, n - 3) && !is_consonant(w, n - 2) && is_consonant(w, n - 1) && w[n - 1] != 'w' &&
      w[n - 1] != 'x' && w[n - 1] != 'y')
    return true;
  return n == 2 && !is_consonant(w, 0) && is_consonant(w, 1);
}

bool ends_with(std::string_view w, std::string_view suffix) {
  return w.size() >= suffix.size() && w.substr(w.size() - suffix.size()) == suffix;
}

std::string_view without(std::string_view w, std::string_view suffix) { return w.substr(0, w.size() - suffix.size()); }

enum class Condition { kNone, kMeasureAbove0, kMeasureAbove1, kIon };

struct Rule {
  std::string_view suffix, replacement;
  Condition condition;
};

bool holds(Condition c, std::string_view stem) {
  switch (c) {
    case Condition::kNone: return true;
    case Condition::kMeasureAbove0: return measure(stem) > 0;
    case Condition::kMeasureAbove1: return measure(stem) > 1;
    case Condition::kIon: return measure(stem) > 1 && !stem.empty() && (stem.back() == 's' || stem.back() == 't');
  }
  return false;
}

// The first rule whose suffix matches decides: it applies if its condition holds, and no
// later rule is tried either way (the paper's "longest matching suffix" convention).
template <std::size_t N>
std::string apply_first_matching(std::string word, const Rule (&rules)[N]) {
  for (const Rule& r : rules) {
    if (!ends_with(word, r.suffix)) continue;
    const std::string_view stem = without(word, r.suffix);
    if (holds(r.condition, stem)) return std::string(stem) + std::string(r.replacement);
    return word;
  }
  return word;
}

std::string step1a(std::string w) {
  if (w.size() == 4 && ends_with(w, "ies")) return std::string(without(w, "ies")) + "ie";  // dies -> die
  static const Rule rules[] = {{"sses", "ss", Condition::kNone},
                               {"ies", "i", Condition::kNone},
                               {"ss", "ss", Condition::kNone},
                               {"s", "", Condition::kNone}};
  return apply_first_matching(std::move(w), rules);
}

std::string step1b(std::string w) {
  if (ends_with(w, "ied")) return std::string(without(w, "ied")) + (w.size() == 4 ? "ie" : "i");  // died, spied
  if (ends_with(w, "eed")) {
    const std::string_view stem = without(w, "eed");
    return measure(stem) > 0 ? std::string(stem) + "ee" : w;
  }
  std::string stem;
  if (ends_with(w, "ed") && has_vowel(without(w, "ed")))
    stem = std::string(without(w, "ed"));
  else if (ends_with(w, "ing") && has_vowel(without(w, "ing")))
    stem = std::string(without(w, "ing"));
  else
    return w;
  // Tidying after -ed/-ing: restore the e of -ate/-ble/-ize, undouble, or add e to short cvc stems.
  if (ends_with(stem, "at") || ends_with(stem, "bl") || ends_with(stem, "iz")) return stem + "e";
  if (ends_double_consonant(stem)) {
    const char last = stem.back();
    if (last != 'l' && last != 's' && last != 'z') stem.pop_back();
    return stem;
  }
  if (measure(stem) == 1 && ends_cvc(stem)) return stem + "e";
  return stem;
}

std::string step1c(std::string w) {
  if (w.size() > 2 && w.back() == 'y' && is_consonant(w, w.size() - 2)) w.back() = 'i';
  return w;
}

std::string step2(std::string w) {
  if (ends_with(w, "alli") && measure(without(w, "alli")) > 0) return step2(std::string(without(w, "alli")) + "al");
  static const Rule rules[] = {
      {"ational", "ate", Condition::kMeasureAbove0}, {"tional", "tion", Condition::kMeasureAbove0},
      {"enci", "ence", Condition::kMeasureAbove0},   {"anci", "ance", Condition::kMeasureAbove0},
      {"izer", "ize", Condition::kMeasureAbove0},    {"bli", "ble", Condition::kMeasureAbove0},
      {"alli", "al", Condition::kMeasureAbove0},     {"entli", "ent", Condition::kMeasureAbove0},
      {"eli", "e", Condition::kMeasureAbove0},       {"ousli", "ous", Condition::kMeasureAbove0},
      {"ization", "ize", Condition::kMeasureAbove0}, {"ation", "ate", Condition::kMeasureAbove0},
      {"ator", "ate", Condition::kMeasureAbove0},    {"alism", "al", Condition::kMeasureAbove0},
      {"iveness", "ive", Condition::kMeasureAbove0}, {"fulness", "ful", Condition::kMeasureAbove0},
      {"ousness", "ous", Condition::kMeasureAbove0}, {"aliti", "al", Condition::kMeasureAbove0},
      {"iviti", "ive", Condition::kMeasureAbove0},   {"biliti", "ble", Condition::kMeasureAbove0},
      {"fulli", "ful", Condition::kMeasureAbove0}};
  // "logi" -> "log", the measure taken on the stem without "ogi" (so geo-, theo- qualify);
  // no rule above ends in "logi", so testing it first changes nothing else.
  if (ends_with(w, "logi")) return measure(without(w, "ogi")) > 0 ? std::string(without(w, "logi")) + "log" : w;
  return apply_first_matching(std::move(w), rules);
}

std::string step3(std::string w) {
  static const Rule rules[] = {{"icate", "ic", Condition::kMeasureAbove0}, {"ative", "", Condition::kMeasureAbove0},
                               {"alize", "al", Condition::kMeasureAbove0}, {"iciti", "ic", Condition::kMeasureAbove0},
                               {"ical", "ic", Condition::kMeasureAbove0},  {"ful", "", Condition::kMeasureAbove0},
                               {"ness", "", Condition::kMeasureAbove0}};
  return apply_first_matching(std::move(w), rules);
}

std::string step4(std::string w) {
  static const Rule rules[] = {{"al", "", Condition::kMeasureAbove1},    {"ance", "", Condition::kMeasureAbove1},
                               {"ence", "", Condition::kMeasureAbove1},  {"er", "", Condition::kMeasureAbove1},
                               {"ic", "", Condition::kMeasureAbove1},    {"able", "", Condition::kMeasureAbove1},
                               {"ible", "", Condition::kMeasureAbove1},  {"ant", "", Condition::kMeasureAbove1},
                               {"ement", "", Condition::kMeasureAbove1}, {"ment", "", Condition::kMeasureAbove1},
                               {"ent", "", Condition::kMeasureAbove1},   {"ion", "", Condition::kIon},
                               {"ou", "", Condition::kMeasureAbove1},    {"ism", "", Condition::kMeasureAbove1},
                               {"ate", "", Condition::kMeasureAbove1},   {"iti", "", Condition::kMeasureAbove1},
                               {"ous", "", Condition::kMeasureAbove1},   {"ive", "", Condition::kMeasureAbove1},
                               {"ize", "", Condition::kMeasureAbove1}};
  return apply_first_matching(std::move(w), rules);
}

// Step 5a tries both of its rules (unlike the others): (m>1) E -> , (m=1 and not *o) E -> .
std::string step5a(std::string w) {
  if (!ends_with(w, "e")) return w;
  const std::string_view stem = without(w, "e");
  const int m = measure(stem);
  if (m > 1 || (m == 1 && !ends_cvc(stem))) return std::string(stem);
  return w;
}

std::string step5b(std::string w) {
  if (ends_with(w, "ll") && measure(without(w, "l")) > 1) w.pop_back();
  return w;
}

}  // namespace

std::string porter_stem(std::string_view word) {
  static const std::unordered_map<std::string_view, std::string_view> irregular = {
      {"sky", "sky"},        {"skies", "sky"},       {"dying", "die"},        {"lying", "lie"},
      {"tying", "tie"},      {"news", "news"},       {"innings", "inning"},   {"inning", "inning"},
      {"outings", "outing"}, {"outing", "outing"},   {"cannings", "canning"}, {"canning", "canning"},
      {"howe", "howe"},      {"proceed", "proceed"}, {"exceed", "exceed"},    {"succeed", "succeed"}};
  if (const auto it = irregular.find(word); it != irregular.end()) return std::string(it->second);
  if (word.size() <= 2) return std::string(word);
  std::string w(word);
  for (auto* step : {step1a, step1b, step1c, step2, step3, step4, step5a, step5b}) w = step(std::move(w));
  return w;
}

}  // namespace ordo::metrics
