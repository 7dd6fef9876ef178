// Units longer than a sentence: cut by SentenceLayout (sentence_layout.cpp), translated as one
// stream through the public Translator (pipeline/ stays sentence-level), and rejoined around
// the original separators.
#include "document/languages.h"
#include "io/model_language.h"
#include "ordo/document.h"

namespace ordo {

std::string document::sentence_language(const Translator& translator, const DecodeOptions& options,
                                        const std::string& language) {
  if (!language.empty()) return language;
  return options.source_lang ? *options.source_lang : io::model_source_language(translator.model_dir());
}

std::vector<DocumentTranslation> translate_documents(const Translator& translator,
                                                     const std::vector<std::string>& units,
                                                     const DecodeOptions& options, const std::string& language,
                                                     const BatchOptions& batching) {
  const std::string lang = document::sentence_language(translator, options, language);
  std::vector<SentenceLayout> layouts;
  layouts.reserve(units.size());
  std::vector<std::string> sentences;
  for (const std::string& unit : units) {
    layouts.emplace_back(unit, lang);
    sentences.insert(sentences.end(), layouts.back().sentences().begin(), layouts.back().sentences().end());
  }
  std::vector<TranslationResult> results = translator.translate(sentences, options, batching);
  std::vector<DocumentTranslation> out(units.size());
  size_t next = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    DocumentTranslation& doc = out[u];
    doc.sentences = layouts[u].spans();
    std::vector<std::string> best;
    for (size_t s = 0; s < doc.sentences.size(); ++s) {
      TranslationResult& result = results[next++];
      best.push_back(result.hypotheses.empty() ? std::string() : result.hypotheses[0].text);
      doc.results.push_back(std::move(result));
    }
    doc.text = layouts[u].rebuild(best);
  }
  return out;
}

}  // namespace ordo
