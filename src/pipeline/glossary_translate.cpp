// translate_with_glossary (ordo/glossary.h): the sentences that force the same phrases run
// together through the Translator. Apart from glossary.cpp, which stays free of the engine so
// that the server's request parsing (and its fuzz harness) can read glossaries without it.
#include "ordo/glossary.h"

#include "ordo/text.h"
#include "ordo/translator.h"
#include "pipeline/glossary_translate.h"
#include "pipeline/partition.h"

namespace ordo {

std::vector<TranslationResult> translate_with_glossary(const Translator& translator,
                                                       const std::vector<std::string>& sentences,
                                                       const Glossary& glossary, const DecodeOptions& options,
                                                       const BatchOptions& batching) {
  for (size_t i = 0; i < sentences.size(); ++i) check_utf8(sentences[i], "input " + std::to_string(i + 1));
  const std::vector<Glossary::Group> groups = glossary.groups(sentences, options.force_words);
  std::vector<pipeline::Part> parts;
  for (const Glossary::Group& g : groups) parts.push_back(g.inputs);
  return pipeline::run_parts<TranslationResult>(
      sentences.size(), parts, options, [&](size_t p, const pipeline::Part& part, const DecodeOptions& part_options) {
        DecodeOptions o = part_options;
        o.glossary.reset();
        o.force_words = groups[p].force_words;
        return translator.translate(pipeline::gather(sentences, part), o, batching);
      });
}

}  // namespace ordo
