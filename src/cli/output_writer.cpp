#include "cli/output_writer.h"

#include <cerrno>
#include <cstring>
#include <iomanip>
#include <iostream>

#include <nlohmann/json.hpp>

#include "ordo/error.h"

namespace ordo::cli {
namespace {

nlohmann::ordered_json hypothesis_json(const Hypothesis& h) {
  return {{"text", h.text}, {"tokens", h.tokens}, {"score", h.score}};
}

}  // namespace

OutputWriter::OutputWriter(const std::string& path, OutputFormat format) : format_(format) {
  if (path.empty() || path == "-") {
    name_ = "stdout";
    out_ = &std::cout;
    return;
  }
  name_ = path;
  file_ = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*file_) throw Error(path + ": cannot create output file (" + std::strerror(errno) + ")");
  out_ = file_.get();
}

void OutputWriter::write(uint64_t index, const TranslationResult& result) {
  std::ostream& out = *out_;
  switch (format_) {
    case OutputFormat::kText:
      out << (result.hypotheses.empty() ? "" : result.hypotheses[0].text) << '\n';
      break;
    case OutputFormat::kNBest:
      for (const Hypothesis& h : result.hypotheses)
        out << index << " ||| " << h.text << " ||| " << std::setprecision(6) << h.score << '\n';
      break;
    case OutputFormat::kJson: {
      nlohmann::ordered_json line;
      if (result.hypotheses.empty()) {
        line = {{"text", ""}, {"tokens", nlohmann::ordered_json::array()}, {"score", 0.0}};
      } else {
        line = hypothesis_json(result.hypotheses[0]);
      }
      line["n_best"] = nlohmann::ordered_json::array();
      for (const Hypothesis& h : result.hypotheses) line["n_best"].push_back(hypothesis_json(h));
      out << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
      break;
    }
  }
}

void OutputWriter::write(uint64_t index, const DocumentTranslation& document, const std::string& unit) {
  std::ostream& out = *out_;
  if (format_ != OutputFormat::kJson) {
    if (blank_line_between_ && index > 0) out << '\n';
    out << document.text << '\n';
    return;
  }
  nlohmann::ordered_json line = {{"text", document.text}, {"sentences", nlohmann::ordered_json::array()}};
  for (size_t i = 0; i < document.sentences.size(); ++i) {
    const SentenceSpan& span = document.sentences[i];
    nlohmann::ordered_json sentence = {{"source", unit.substr(span.begin, span.end - span.begin)}};
    const TranslationResult& result = document.results[i];
    if (!result.hypotheses.empty()) sentence.update(hypothesis_json(result.hypotheses[0]));
    line["sentences"].push_back(std::move(sentence));
  }
  out << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void OutputWriter::flush() {
  out_->flush();
  if (!*out_) throw Error(name_ + ": write error (" + std::strerror(errno) + ")");
}

}  // namespace ordo::cli
