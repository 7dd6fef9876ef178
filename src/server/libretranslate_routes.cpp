// POST /translate as LibreTranslate answers it: q as a text or a list, source "auto", format
// text or html, alternatives (service.h).
#include "server/service.h"

namespace ordo::server {

void Service::libre_translate(const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestContext context = contexts_.of(req);
  const Clock::time_point deadline = request_deadline(context, config_.limits.timeout_seconds);
  const RequestFields fields = read_fields(req, res, reader, false);
  check_key(&fields, req);
  require_ready();
  bool is_list = false;
  const std::vector<std::string> texts = checked_texts(fields, "q", is_list, "Invalid request: missing q parameter", true);
  std::string source = fields.string("source").value_or("");
  const std::string target = fields.string("target").value_or("");
  if (source.empty()) throw ApiError(400, "Invalid request: missing source parameter");
  if (target.empty()) throw ApiError(400, "Invalid request: missing target parameter");
  std::string format = fields.string("format").value_or("text");
  if (format.empty()) format = "text";
  if (format != "text" && format != "html") throw ApiError(400, shown(format) + " format is not supported (text, html)");
  const int alternatives =
      static_cast<int>(fields.integer("alternatives", 0, config_.limits.max_beam_size - 1).value_or(0));

  const ModelSet& set = models();
  if (!set.serves_language(target))
    throw ApiError(400, shown(target) + " is not supported (served languages: " + set.language_list() + ")");
  const bool detect = source == "auto";
  if (detect) {
    const std::vector<std::string> sources = set.sources_for(target);
    if (sources.size() != 1)
      throw ApiError(400, "source 'auto' is not supported: ordo does not detect languages, and " +
                              std::to_string(sources.size()) + " source languages translate into " + target +
                              (sources.empty() ? std::string() : " (" + join(sources, 12) + ")") +
                              "; name the source language");
    source = sources.front();
  } else if (!set.serves_language(source)) {
    throw ApiError(400, shown(source) + " is not supported (served languages: " + set.language_list() + ")");
  }
  const ServedModel* model = set.for_pair(source, target);
  if (!model)
    throw ApiError(400, language_name(target) + " (" + target + ") is not available as a target language from " +
                            language_name(source) + " (" + source + ") (served pairs: " + set.pair_list() + ")");

  DecodeOptions options;
  options.preset = model->preset;
  if (model->multilingual()) {
    options.source_lang = model->model_code(source);
    options.target_lang = model->model_code(target);
  }
  if (alternatives > 0) {
    options.n_best = alternatives + 1;
    options.beam_size = std::max(model->default_beam, alternatives + 1);
  }

  // Every text cut into sentences (lines, or the text runs of the HTML); all of them go to
  // the batcher as one request.
  std::vector<std::unique_ptr<SentenceLayout>> lines;  // format=text: line by line, line ends kept
  std::vector<std::unique_ptr<HtmlDocument>> htmls;
  std::vector<std::string> sentences;
  std::vector<size_t> first(texts.size() + 1, 0);
  for (size_t i = 0; i < texts.size(); ++i) {
    first[i] = sentences.size();
    const std::vector<std::string>* runs;
    if (format == "html") {
      if (ordo::html_tag_count(texts[i]) > kMaxHtmlTags)
        throw ApiError(400, "Invalid request: " + (is_list ? "q[" + std::to_string(i) + "]" : std::string("q")) +
                                " has more than " + std::to_string(kMaxHtmlTags) + " HTML tags");
      htmls.push_back(std::make_unique<HtmlDocument>(texts[i], source));
      runs = &htmls.back()->sentences();
      // Inline tags go back around the words they align to.
      if (htmls.back()->needs_alignment()) options.return_attention = true;
    } else {
      lines.push_back(std::make_unique<SentenceLayout>(texts[i], source, LineBreaks::kEndLine));
      runs = &lines.back()->sentences();
    }
    sentences.insert(sentences.end(), runs->begin(), runs->end());
  }
  first[texts.size()] = sentences.size();
  const std::vector<TranslationResult> results = translate(*model, options, sentences, context, deadline);

  const auto hypothesis_texts = [&](size_t text, size_t k) {
    std::vector<std::string> out;
    for (size_t s = first[text]; s < first[text + 1]; ++s) {
      const auto& hyps = results[s].hypotheses;
      out.push_back(hyps.empty() ? "" : hyps[std::min(k, hyps.size() - 1)].text);
    }
    return out;
  };
  Json translated = Json::array(), alternative_lists = Json::array();
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string best;
    if (format == "html") {
      std::vector<AlignedTranslation> aligned;
      for (size_t s = first[i]; s < first[i + 1]; ++s) aligned.push_back(aligned_translation(results[s]));
      best = htmls[i]->rebuild(aligned);
    } else {
      best = lines[i]->rebuild(hypothesis_texts(i, 0));
    }
    translated.push_back(best);
    // LibreTranslate gives no alternatives for HTML, and leaves out duplicates of the best.
    Json alts = Json::array();
    if (format == "text") {
      for (int k = 1; k <= alternatives; ++k) {
        const std::string alt = lines[i]->rebuild(hypothesis_texts(i, static_cast<size_t>(k)));
        if (alt != best && std::find(alts.begin(), alts.end(), alt) == alts.end()) alts.push_back(alt);
      }
    }
    alternative_lists.push_back(alts);
  }
  Json answer;
  answer["translatedText"] = is_list ? translated : translated[0];
  if (alternatives > 0) answer["alternatives"] = is_list ? alternative_lists : alternative_lists[0];
  if (detect) {
    const Json detected = {{"confidence", 100.0}, {"language", source}};
    answer["detectedLanguage"] = is_list ? Json(std::vector<Json>(texts.size(), detected)) : detected;
  }
  send_json(res, 200, answer);
}

}  // namespace ordo::server
