// translate_file(): a file through FileDocument (file_document.cpp) and the model. The
// sentences go in slices when the caller wants progress (a slice is still sorted into
// length-sorted batches), else in one call.
#include "document/languages.h"
#include "io/model_language.h"
#include "ordo/files.h"

namespace ordo {

std::string translate_file(const Translator& translator, const std::string& bytes, FileFormat format,
                           const DecodeOptions& options, const FileOptions& file_options,
                           const TranslateCall& translate) {
  FileOptions with_language = file_options;
  with_language.source_language = document::sentence_language(translator, options, file_options.source_language);
  // A model's code ("deu_Latn", "__de__") as files name languages ("de").
  if (with_language.target_language.empty())
    with_language.target_language = document::icu_language(
        options.target_lang ? *options.target_lang : io::model_target_language(translator.model_dir()));
  const FileDocument document(bytes, format, with_language);
  DecodeOptions decode = options;
  if (document.needs_alignment()) decode.return_attention = true;
  const std::vector<std::string>& sentences = document.sentences();
  // Slices of ~2% of the file (at least a few batches' worth) when progress is shown.
  const size_t slice = file_options.on_progress ? std::max<size_t>(256, sentences.size() / 50 + 1) : sentences.size();
  std::vector<AlignedTranslation> translations;
  translations.reserve(sentences.size());
  for (size_t begin = 0; begin < sentences.size(); begin += slice) {
    const size_t end = std::min(sentences.size(), begin + slice);
    const std::vector<std::string> part(sentences.begin() + begin, sentences.begin() + end);
    for (const TranslationResult& result : translate(part, decode)) translations.push_back(aligned_translation(result));
    if (file_options.on_progress) file_options.on_progress(end, sentences.size());
  }
  return document.rebuild(translations);
}

std::string translate_file(const Translator& translator, const std::string& bytes, FileFormat format,
                           const DecodeOptions& options, const FileOptions& file_options,
                           const BatchOptions& batching) {
  return translate_file(translator, bytes, format, options, file_options,
                        [&](const std::vector<std::string>& texts, const DecodeOptions& o) {
                          return translator.translate(texts, o, batching);
                        });
}

}  // namespace ordo
