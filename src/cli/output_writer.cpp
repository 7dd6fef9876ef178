#include "cli/output_writer.h"

#include <cerrno>
#include <cstring>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "faces/result_json.h"
#include "ordo/alignment.h"
#include "ordo/error.h"

namespace ordo::cli {
namespace {

// Marian's soft alignment: one comma-separated row of weights per target piece.
std::string soft_text(const std::vector<std::vector<float>>& rows) {
  std::ostringstream out;
  out << std::setprecision(4);
  for (size_t t = 0; t < rows.size(); ++t) {
    if (t) out << ' ';
    for (size_t s = 0; s < rows[t].size(); ++s) out << (s ? "," : "") << rows[t][s];
  }
  return out.str();
}

}  // namespace

std::string OutputWriter::alignment_field(const TranslationResult& result, const Hypothesis& h) const {
  if (extras_.alignment.empty()) return "";
  if (extras_.alignment == "soft") return " ||| " + soft_text(soft_alignment(result, h));
  return " ||| " + faces::pharaoh(extras_.alignment_words ? word_alignment(result, h) : hard_alignment(result, h));
}

void OutputWriter::write_hypothesis(faces::JsonObjectWriter& out, const TranslationResult& result,
                                    const Hypothesis& h) const {
  const nlohmann::ordered_json fields = faces::hypothesis_json(h);
  for (const auto& [key, value] : fields.items()) out.field(key.c_str(), value);
  faces::add_alignment_and_attention(out, result, h, {extras_.alignment, extras_.alignment_words, extras_.attention});
}

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
      if (result.hypotheses.empty()) {
        out << '\n';
      } else {
        const std::string& text = result.hypotheses[0].text;
        // What stream() wrote is a prefix of the text (TokenEvent::text); only the rest is left.
        const size_t written = text.compare(0, streamed_.size(), streamed_) == 0 ? streamed_.size() : 0;
        out << text.substr(written) << alignment_field(result, result.hypotheses[0]) << '\n';
      }
      streamed_.clear();
      break;
    case OutputFormat::kNBest:
      for (const Hypothesis& h : result.hypotheses)
        out << index << " ||| " << h.text << " ||| " << std::setprecision(6) << h.score << alignment_field(result, h)
            << '\n';
      break;
    case OutputFormat::kJson: {
      // Written as text (faces/result_json.h): a line with attention costs about its size.
      std::string text;
      faces::JsonObjectWriter line(text);
      if (result.hypotheses.empty()) {
        const nlohmann::ordered_json empty = faces::hypothesis_json(Hypothesis());
        for (const auto& [key, value] : empty.items()) line.field(key.c_str(), value);
      } else {
        write_hypothesis(line, result, result.hypotheses[0]);
      }
      if (extras_.attention && !result.source_tokens.empty()) line.field("source_tokens", result.source_tokens);
      std::string& list = line.raw_field("n_best");
      list += '[';
      for (size_t k = 0; k < result.hypotheses.size(); ++k) {
        if (k) list += ',';
        faces::JsonObjectWriter hypothesis(list);
        write_hypothesis(hypothesis, result, result.hypotheses[k]);
        hypothesis.close();
      }
      list += ']';
      line.close();
      out << text << '\n';
      break;
    }
  }
}

void OutputWriter::write(uint64_t index, const DocumentTranslation& document, const std::string& unit, bool crlf) {
  std::ostream& out = *out_;
  if (format_ != OutputFormat::kJson) {
    const char* line_end = crlf ? "\r\n" : "\n";
    if (blank_line_between_ && index > 0) out << line_end;
    out << document.text << line_end;
    return;
  }
  nlohmann::ordered_json line = {{"text", document.text}, {"sentences", nlohmann::ordered_json::array()}};
  for (size_t i = 0; i < document.sentences.size(); ++i) {
    const SentenceSpan& span = document.sentences[i];
    nlohmann::ordered_json sentence = {{"source", unit.substr(span.begin, span.end - span.begin)}};
    const TranslationResult& result = document.results[i];
    if (!result.hypotheses.empty()) sentence.update(faces::hypothesis_json(result.hypotheses[0]));
    line["sentences"].push_back(std::move(sentence));
  }
  out << line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << '\n';
}

void OutputWriter::stream(const std::string& final_words) {
  if (final_words.empty()) return;
  streamed_ += final_words;
  *out_ << final_words;
  flush();
}

void OutputWriter::flush() {
  out_->flush();
  if (!*out_) throw Error(name_ + ": write error (" + std::strerror(errno) + ")");
}

}  // namespace ordo::cli
