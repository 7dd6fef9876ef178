// POST /translate as LibreTranslate answers it: q as a text or a list, source "auto", format
// text or html, alternatives; and POST /detect (service.h). Its cut-translate-rebuild of a
// request's texts (translate_texts()) serves DeepL's /v2/translate too.
#include "server/language_detect.h"
#include "server/service.h"

namespace ordo::server {
namespace {

Json detected_json(const DetectedLanguage& d) { return Json{{"confidence", d.confidence}, {"language", d.language}}; }

}  // namespace

// LibreTranslate detects a list's texts together and translates them all from one language.
DetectedLanguage detect_source(const ModelSet& set, const std::vector<std::string>& texts, const std::string& target,
                               bool html, const std::string& field, const std::string& what) {
  const std::vector<std::string> sources = set.sources_for(target);
  if (sources.empty())
    throw ApiError(400, field + ": no served language translates into " + language_name(target) + " (" + target +
                            ") (served pairs: " + set.pair_list() + ")");
  // The first few thousand characters are enough to tell the language (a file can be long).
  std::string all;
  for (const std::string& text : texts) {
    if (all.size() > 8000) break;
    all += text + "\n";
  }
  const Detection detection = detect_language(all, set.source_languages(), html);
  const auto translates = [&](const DetectedLanguage& d) {
    return std::find(sources.begin(), sources.end(), d.language) != sources.end();
  };
  if (!detection.other.empty())
    throw ApiError(400, field + ": " + what + " is " + language_name(detection.other) + " (" + detection.other +
                            "), which this server does not translate from (served languages: " + set.language_list() +
                            ")");
  if (detection.reliable) {
    const DetectedLanguage& top = detection.languages.front();
    if (translates(top)) return top;
    throw ApiError(400, field + ": " + what + " is " + language_name(top.language) + " (" + top.language +
                            "), which is not available as a source language for " + language_name(target) + " (" +
                            target + ") (sources: " + join(sources, 12) + "); name the source language");
  }
  for (const DetectedLanguage& d : detection.languages)
    if (translates(d)) return d;
  if (sources.size() == 1) return DetectedLanguage{sources.front(), 0.0};
  throw ApiError(400, field + ": the language of " + what + " could not be detected, and " +
                          std::to_string(sources.size()) + " source languages translate into " + target + " (" +
                          join(sources, 12) + "); name the source language");
}

void Service::libre_detect(const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestFields fields = read_fields(req, res, reader, false);
  check_key(&fields, req);
  require_ready();
  bool is_list = false;
  const std::vector<std::string> texts =
      checked_texts(fields, "q", is_list, "Invalid request: missing q parameter", true);
  admit(req, texts, "");  // the key's limits, as LibreTranslate counts /detect; the access log
  const std::vector<std::string> candidates = models().source_languages();
  if (candidates.empty())
    throw ApiError(400, "this server translates from no language (it serves no translation model)");
  // Nothing detected among them: LibreTranslate's answer, English (here: the first served
  // source language when English is not one) with confidence 0.
  const std::string fallback =
      std::find(candidates.begin(), candidates.end(), "en") != candidates.end() ? "en" : candidates.front();
  Json answers = Json::array();
  for (const std::string& text : texts) {
    Json answer = Json::array();
    for (const DetectedLanguage& d : detect_language(text, candidates).languages) answer.push_back(detected_json(d));
    if (answer.empty()) answer.push_back(detected_json({fallback, 0.0}));
    answers.push_back(answer);
  }
  send_json(res, 200, is_list ? answers : answers[0]);
}

void Service::libre_translate(const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestContext context = contexts_.of(req);
  const Clock::time_point deadline = request_deadline(context, config_.limits.timeout_seconds);
  const RequestFields fields = read_fields(req, res, reader, false);
  check_key(&fields, req);
  require_ready();
  bool is_list = false;
  const std::vector<std::string> texts =
      checked_texts(fields, "q", is_list, "Invalid request: missing q parameter", true);
  std::string source = fields.string("source").value_or("");
  const std::string target = fields.string("target").value_or("");
  if (source.empty()) throw ApiError(400, "Invalid request: missing source parameter");
  if (target.empty()) throw ApiError(400, "Invalid request: missing target parameter");
  std::string format = fields.string("format").value_or("text");
  if (format.empty()) format = "text";
  if (format != "text" && format != "html")
    throw ApiError(400, shown(format) + " format is not supported (text, html)");
  const int alternatives =
      static_cast<int>(fields.integer("alternatives", 0, config_.limits.max_beam_size - 1).value_or(0));

  const ModelSet& set = models();
  if (!set.serves_language(target))
    throw ApiError(400, shown(target) + " is not supported (served languages: " + set.language_list() + ")");
  const bool detect = source == "auto";
  DetectedLanguage detected;
  if (detect) {
    detected = detect_source(set, texts, target, format == "html", "source 'auto'", "q");
    source = detected.language;
  } else if (!set.serves_language(source)) {
    throw ApiError(400, shown(source) + " is not supported (served languages: " + set.language_list() + ")");
  }
  const ServedModel* model = set.for_pair(source, target);
  if (!model)
    throw ApiError(400, language_name(target) + " (" + target + ") is not available as a target language from " +
                            language_name(source) + " (" + source + ") (served pairs: " + set.pair_list() + ")");

  admit(req, texts, model->name);  // the key's limits; the access log

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

  TextsForm form;
  form.html = format == "html";
  form.alternatives = alternatives;
  form.name = [is_list](size_t i) {
    return "Invalid request: " + (is_list ? "q[" + std::to_string(i) + "]" : std::string("q"));
  };
  const TranslatedTexts out = translate_texts(*model, options, texts, source, form, context, deadline);
  // LibreTranslate gives no alternatives for HTML, and leaves out duplicates of the best.
  Json alternative_lists = Json::array();
  for (size_t i = 0; i < texts.size(); ++i) {
    Json alts = Json::array();
    for (const std::string& alt : out.alternatives[i])
      if (alt != out.best[i] && std::find(alts.begin(), alts.end(), alt) == alts.end()) alts.push_back(alt);
    alternative_lists.push_back(alts);
  }
  const Json translated = out.best;
  Json answer;
  answer["translatedText"] = is_list ? translated : translated[0];
  if (alternatives > 0) answer["alternatives"] = is_list ? alternative_lists : alternative_lists[0];
  if (detect) {
    // One per text for a list, all the same: the texts were detected together, as LibreTranslate.
    const Json one = detected_json(detected);
    answer["detectedLanguage"] = is_list ? Json(std::vector<Json>(texts.size(), one)) : one;
  }
  send_json(res, 200, answer);
}

// Every text cut into sentences (lines, or the text runs of the HTML); all of them go to the
// batcher as one request.
Service::TranslatedTexts Service::translate_texts(const ServedModel& model, DecodeOptions options,
                                                  const std::vector<std::string>& texts, const std::string& source,
                                                  const TextsForm& form, const RequestContext& context,
                                                  Clock::time_point deadline) {
  std::vector<std::unique_ptr<SentenceLayout>> lines;  // plain text, line ends kept
  std::vector<std::unique_ptr<HtmlDocument>> htmls;
  std::vector<std::string> sentences;
  std::vector<size_t> first(texts.size() + 1, 0);
  for (size_t i = 0; i < texts.size(); ++i) {
    first[i] = sentences.size();
    const std::vector<std::string>* runs;
    if (form.html) {
      if (html_tag_count(texts[i]) > kMaxHtmlTags)
        throw ApiError(400, form.name(i) + " has more than " + std::to_string(kMaxHtmlTags) + " HTML tags");
      htmls.push_back(std::make_unique<HtmlDocument>(texts[i], source));
      runs = &htmls.back()->sentences();
      // Inline tags go back around the words they align to.
      if (htmls.back()->needs_alignment()) options.return_attention = true;
    } else {
      lines.push_back(std::make_unique<SentenceLayout>(texts[i], source, form.breaks));
      runs = &lines.back()->sentences();
    }
    sentences.insert(sentences.end(), runs->begin(), runs->end());
  }
  first[texts.size()] = sentences.size();
  const std::vector<TranslationResult> results = form.sliced
                                                     ? translate_slices(model, options, sentences, context, deadline)
                                                     : translate(model, options, sentences, context, deadline);

  const auto hypothesis_texts = [&](size_t text, size_t k) {
    std::vector<std::string> out;
    for (size_t s = first[text]; s < first[text + 1]; ++s) {
      const auto& hyps = results[s].hypotheses;
      out.push_back(hyps.empty() ? "" : hyps[std::min(k, hyps.size() - 1)].text);
    }
    return out;
  };
  TranslatedTexts out;
  out.alternatives.resize(texts.size());
  for (size_t i = 0; i < texts.size(); ++i) {
    if (form.html) {
      std::vector<AlignedTranslation> aligned;
      for (size_t s = first[i]; s < first[i + 1]; ++s) aligned.push_back(aligned_translation(results[s]));
      out.best.push_back(htmls[i]->rebuild(aligned));
      continue;
    }
    out.best.push_back(lines[i]->rebuild(hypothesis_texts(i, 0)));
    for (int k = 1; k <= form.alternatives; ++k)
      out.alternatives[i].push_back(lines[i]->rebuild(hypothesis_texts(i, static_cast<size_t>(k))));
  }
  return out;
}

}  // namespace ordo::server
