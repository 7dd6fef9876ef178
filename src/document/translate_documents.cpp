// Units longer than a sentence: split (sentences.cpp), translated as one stream through the
// public Translator (pipeline/ stays sentence-level), and rejoined around the original
// separators.
#include "io/model_language.h"
#include "ordo/document.h"

namespace ordo {
namespace {

// A sentence as the model sees it: soft line breaks inside it become spaces.
std::string sentence_text(const std::string& unit, const SentenceSpan& span) {
  std::string s = unit.substr(span.begin, span.end - span.begin);
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

}  // namespace

std::vector<DocumentTranslation> translate_documents(const Translator& translator, const std::vector<std::string>& units,
                                                     const DecodeOptions& options, const std::string& language,
                                                     const BatchOptions& batching) {
  const std::string lang = !language.empty()     ? language
                           : options.source_lang ? *options.source_lang
                                                 : io::model_source_language(translator.model_dir());
  std::vector<DocumentTranslation> out(units.size());
  std::vector<std::string> sentences;
  for (size_t u = 0; u < units.size(); ++u) {
    out[u].sentences = split_sentences(units[u], lang);
    for (const SentenceSpan& span : out[u].sentences) sentences.push_back(sentence_text(units[u], span));
  }
  std::vector<TranslationResult> results = translator.translate(sentences, options, batching);
  size_t next = 0;
  for (size_t u = 0; u < units.size(); ++u) {
    DocumentTranslation& doc = out[u];
    size_t copied = 0;
    for (const SentenceSpan& span : doc.sentences) {
      TranslationResult& result = results[next++];
      doc.text += units[u].substr(copied, span.begin - copied);
      if (!result.hypotheses.empty()) doc.text += result.hypotheses[0].text;
      copied = span.end;
      doc.results.push_back(std::move(result));
    }
    doc.text += units[u].substr(copied);
  }
  return out;
}

}  // namespace ordo
