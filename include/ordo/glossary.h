// ordo — glossaries: "always render bicycle as Velo". A source term found in a sentence puts
// its target term where the model's own translation of the term stands, and leaves the rest
// of that translation as it was: the sentence is translated as without the glossary, the
// target words the term's source words attend to most (the alignment layer's cross-attention,
// ordo/alignment.h) are found, and their tokens are replaced by the target term's. Why not
// constrained beam search (DecodeOptions::force_words): it meets the constraint by appending
// the term wherever it scores best, most often after the finished sentence, and keeps the
// model's own word (docs/glossary.md has the measure). Sentences without a term are translated
// exactly as without the glossary.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ordo/export.h"
#include "ordo/options.h"
#include "ordo/translator.h"

namespace ordo {

class ORDO_API Glossary {
 public:
  // Reads a TSV file: one "source term<TAB>target term" per line (UTF-8; blank lines skipped; a
  // leading byte order mark dropped). A bad line (no tab, more than one, an empty term, a NUL
  // byte, invalid UTF-8) throws ordo::Error naming the file and the line.
  static Glossary read_tsv(const std::string& path);
  // Throws ordo::Error naming `where` for an empty term, or a NUL byte or invalid UTF-8 in a
  // term. Terms are trimmed of spaces.
  void add(const std::string& source_term, const std::string& target_term, const std::string& where = "glossary");
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // One occurrence of a source term in a sentence: where it stands (UTF-8 byte offsets, `end`
  // past its last byte) and the target term to put in place of its translation.
  struct Match {
    size_t begin = 0, end = 0;
    std::string target;
  };
  // The occurrences of the source terms in `sentence`, in order: compared case-insensitively
  // (Unicode case folding), a match starting and ending on word boundaries (ICU's word break
  // rules: "Vertrag" is found in "Der Vertrag." but not in "Vertragsstrafe"). Where terms
  // overlap the longest wins (the one listed first when they are as long).
  std::vector<Match> matches(const std::string& sentence) const;
  // The target terms of matches(sentence), each once, in order of their first occurrence.
  std::vector<std::string> targets_in(const std::string& sentence) const;
  // The sentences with a term and those without, each group's indices in input order; groups
  // with no sentence are left out, the group of the first sentence comes first. A caller
  // translates the first kind with return_attention and puts the terms in place
  // (Translator::place_terms), the second as without the glossary.
  struct Group {
    bool terms = false;
    std::vector<size_t> inputs;
  };
  std::vector<Group> groups(const std::vector<std::string>& sentences) const;

 private:
  struct Entry {
    std::string source;  // case-folded
    std::string target;
  };
  std::vector<Entry> entries_;
  std::map<std::string, size_t> first_entry_;  // folded source term -> its first entry
  size_t longest_source_ = 0;                  // bytes of the longest folded source term
};

}  // namespace ordo
