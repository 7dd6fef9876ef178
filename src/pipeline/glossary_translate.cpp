// translate_with_glossary (ordo/glossary.h): the sentences with a term are translated with their
// attention and their terms put in place (Translator::place_terms); the others as without the
// glossary.
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
  const std::vector<Glossary::Group> groups = glossary.groups(sentences);
  std::vector<pipeline::Part> parts;
  for (const Glossary::Group& g : groups) parts.push_back(g.inputs);
  return pipeline::run_parts<TranslationResult>(
      sentences.size(), parts, options, [&](size_t p, const pipeline::Part& part, const DecodeOptions& part_options) {
        const std::vector<std::string> texts = pipeline::gather(sentences, part);
        DecodeOptions o = part_options;
        o.glossary.reset();
        if (!groups[p].terms) return translator.translate(texts, o, batching);
        // The model's own translation with the attention that says where its words are; its
        // tokens are not streamed (the terms change them): each input's done event follows.
        o.return_attention = true;
        if (o.on_token) o.on_token = [](const TokenEvent&) { return true; };
        std::vector<TranslationResult> results =
            translator.place_terms(texts, translator.translate(texts, o, batching), glossary, part_options);
        if (part_options.on_token)
          for (size_t k = 0; k < results.size(); ++k) {
            if (!has_text(texts[k]) || results[k].hypotheses.empty()) continue;
            TokenEvent done;
            done.input = k;
            done.text = done.delta = results[k].hypotheses[0].text;
            done.done = true;
            part_options.on_token(done);
          }
        return results;
      });
}

}  // namespace ordo
