// translate_html(): an HTML page through the public Translator, sentence by sentence
// (html_layout.cpp cuts it and puts it back), with word alignments when inline markup needs them.
#include "document/languages.h"
#include "ordo/alignment.h"
#include "ordo/document.h"

namespace ordo {

AlignedTranslation aligned_translation(const TranslationResult& result, size_t hypothesis) {
  AlignedTranslation out;
  if (hypothesis >= result.hypotheses.size()) return out;
  const Hypothesis& hyp = result.hypotheses[hypothesis];
  out.text = hyp.text;
  if (hyp.attention.empty()) return out;
  out.words = word_alignment(result, hyp);
  std::vector<std::string> source_pieces;
  for (int64_t p : result.source_text_positions)
    if (p >= 0 && static_cast<size_t>(p) < result.source_tokens.size())
      source_pieces.push_back(result.source_tokens[static_cast<size_t>(p)]);
  const std::vector<int64_t> source_words = word_indices(source_pieces), target_words = word_indices(hyp.tokens);
  out.source_words = source_words.empty() ? 0 : source_words.back() + 1;
  out.target_words = target_words.empty() ? 0 : target_words.back() + 1;
  return out;
}

std::string translate_html(const Translator& translator, const std::string& html, const DecodeOptions& options,
                           const std::string& language, const HtmlLimits& limits) {
  const std::string lang = document::sentence_language(translator, options, language);
  const HtmlDocument document(html, lang, limits);
  DecodeOptions decode = options;
  if (document.needs_alignment()) decode.return_attention = true;
  const std::vector<TranslationResult> results = translator.translate(document.sentences(), decode);
  std::vector<AlignedTranslation> translations;
  translations.reserve(results.size());
  for (const TranslationResult& result : results) translations.push_back(aligned_translation(result));
  return document.rebuild(translations);
}

}  // namespace ordo
