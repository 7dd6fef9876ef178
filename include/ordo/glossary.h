// ordo — glossaries: "always render Vertrag as contract". A source term found in a sentence
// forces its target term into that sentence's translation (DecodeOptions::force_words, i.e.
// transformers' constrained beam search); sentences without a term translate as without the
// glossary.
#pragma once

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
  // leading byte order mark dropped). A bad line (no tab, more than one, an empty term, '|' in a
  // target term, a NUL byte, invalid UTF-8) throws ordo::Error naming the file and the line.
  static Glossary read_tsv(const std::string& path);
  // Throws ordo::Error naming `where` for an empty term, a NUL byte or invalid UTF-8 in a term,
  // or a '|' in the target term.
  void add(const std::string& source_term, const std::string& target_term, const std::string& where = "glossary");
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // The target terms of the source terms `sentence` contains: compared case-insensitively
  // (Unicode case folding), a match starting and ending on word boundaries (ICU's word break
  // rules: "Vertrag" is found in "Der Vertrag." but not in "Vertragsstrafe"). In glossary
  // order, each once.
  std::vector<std::string> targets_in(const std::string& sentence) const;
  // The same as DecodeOptions::force_words text: `base` (options' own, may be unset) and the
  // targets found, joined with '|'; unset when there is neither.
  std::optional<std::string> force_words_for(const std::string& sentence,
                                             const std::optional<std::string>& base = std::nullopt) const;
  // The sentences grouped by force_words_for(sentence, base): each group's force_words and its
  // sentences' indices, groups in order of first appearance. A caller translates each group
  // with its force_words (Translator::translate does, for DecodeOptions::glossary).
  struct Group {
    std::optional<std::string> force_words;
    std::vector<size_t> inputs;
  };
  std::vector<Group> groups(const std::vector<std::string>& sentences,
                            const std::optional<std::string>& base = std::nullopt) const;

 private:
  struct Entry {
    std::string source;  // case-folded
    std::string target;
  };
  std::vector<Entry> entries_;
};

}  // namespace ordo
