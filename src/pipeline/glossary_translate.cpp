// translate_with_glossary (ordo/glossary.h): the sentences that force the same phrases run
// together through the Translator. Apart from glossary.cpp, which stays free of the engine so
// that the server's request parsing (and its fuzz harness) can read glossaries without it.
#include "ordo/glossary.h"

#include "ordo/text.h"
#include "ordo/translator.h"

namespace ordo {

std::vector<TranslationResult> translate_with_glossary(const Translator& translator,
                                                       const std::vector<std::string>& sentences,
                                                       const Glossary& glossary, const DecodeOptions& options,
                                                       const BatchOptions& batching) {
  for (size_t i = 0; i < sentences.size(); ++i) check_utf8(sentences[i], "input " + std::to_string(i + 1));
  const std::vector<Glossary::Group> groups = glossary.groups(sentences, options.force_words);
  std::vector<TranslationResult> results(sentences.size());
  for (const Glossary::Group& g : groups) {
    DecodeOptions o = options;
    o.glossary.reset();
    o.force_words = g.force_words;
    const std::vector<size_t>& group = g.inputs;
    if (options.on_token)
      o.on_token = [&options, &group](const TokenEvent& event) {
        TokenEvent e = event;
        e.input = group[event.input];
        return options.on_token(e);
      };
    std::vector<std::string> part;
    for (size_t i : group) part.push_back(sentences[i]);
    std::vector<TranslationResult> done = translator.translate(part, o, batching);
    for (size_t k = 0; k < group.size(); ++k) results[group[k]] = std::move(done[k]);
  }
  return results;
}

}  // namespace ordo
