// ordo-evaluate: corpus BLEU / chrF / ROUGE of a hypothesis file against reference files.
//
//   ordo-evaluate --hyp out.txt --ref ref.txt [--ref ref2.txt ...] [--metrics bleu,chrf,rouge] [--rouge-stemmer] [--json]
//
// Files are UTF-8, one segment per line, aligned by line number. A trailing "\r" is dropped
// from every line. Exit status: 0 on success, 1 on a usage/input error.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "metrics/bleu.h"
#include "metrics/chrf.h"
#include "metrics/rouge.h"

namespace {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open file '" + path + "'");
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
  }
  if (in.bad()) throw InputError("error while reading '" + path + "'");
  return lines;
}

std::vector<std::string> split_metrics(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    std::string m = item.substr(b, e - b + 1);
    for (auto& c : m) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.push_back(m);
  }
  return out;
}

nlohmann::json prf_json(const ordo::metrics::RougePRF& v) {
  return {{"precision", v.precision}, {"recall", v.recall}, {"fmeasure", v.fmeasure}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ordo-evaluate: corpus BLEU (sacreBLEU 13a/exp defaults), chrF2 and ROUGE-1/2/L"};
  std::string hyp_path;
  std::vector<std::string> ref_paths;
  std::string metrics_arg = "bleu,chrf,rouge";
  bool as_json = false;
  bool rouge_stemmer = false;
  app.add_option("--hyp,-i", hyp_path, "Hypothesis file, one segment per line")->required();
  app.add_option("--ref,-r", ref_paths, "Reference file (repeat for multiple references)")->required();
  app.add_option("--metrics,-m", metrics_arg, "Comma-separated subset of bleu,chrf,rouge")->capture_default_str();
  app.add_flag("--json", as_json, "Print one JSON object instead of text lines");
  app.add_flag("--rouge-stemmer", rouge_stemmer,
               "ROUGE on Porter-stemmed words, as rouge_score's use_stemmer=True (most published ROUGE)");
  CLI11_PARSE(app, argc, argv);

  try {
    const auto metrics = split_metrics(metrics_arg);
    if (metrics.empty()) throw InputError("--metrics is empty");
    const std::set<std::string> known{"bleu", "chrf", "rouge"};
    for (const auto& m : metrics)
      if (!known.count(m)) throw InputError("unknown metric '" + m + "' (expected bleu, chrf or rouge)");

    const auto hyps = read_lines(hyp_path);
    std::vector<std::vector<std::string>> refs;
    refs.reserve(ref_paths.size());
    for (const auto& p : ref_paths) {
      refs.push_back(read_lines(p));
      if (refs.back().size() != hyps.size()) {
        throw InputError("line count mismatch: hypothesis file '" + hyp_path + "' has " + std::to_string(hyps.size()) +
                         " lines but reference file '" + p + "' has " + std::to_string(refs.back().size()) + " lines");
      }
    }

    nlohmann::json out = nlohmann::json::object();
    out["hyp"] = hyp_path;
    out["refs"] = ref_paths;
    out["num_segments"] = hyps.size();
    std::vector<std::string> lines;
    for (const auto& m : metrics) {
      if (out.contains(m)) continue;  // listed twice
      if (m == "bleu") {
        const auto b = ordo::metrics::corpus_bleu(hyps, refs);
        out["bleu"] = {{"score", b.score},
                       {"precisions", b.precisions},
                       {"counts", b.counts},
                       {"totals", b.totals},
                       {"bp", b.bp},
                       {"ratio", b.ratio},
                       {"hyp_len", b.sys_len},
                       {"ref_len", b.ref_len},
                       {"signature", b.signature},
                       {"verbose", b.format()}};
        lines.push_back(b.format());
      } else if (m == "chrf") {
        const auto c = ordo::metrics::corpus_chrf(hyps, refs);
        out["chrf"] = {{"score", c.score},
                       {"char_order", c.char_order},
                       {"word_order", c.word_order},
                       {"beta", c.beta},
                       {"signature", c.signature}};
        lines.push_back(c.format());
      } else if (m == "rouge") {
        const auto r = ordo::metrics::corpus_rouge(hyps, refs, rouge_stemmer);
        out["rouge"] = {{"rouge1", prf_json(r.rouge1)},
                        {"rouge2", prf_json(r.rouge2)},
                        {"rougeL", prf_json(r.rougeL)},
                        {"tokenizer", rouge_stemmer ? "rouge_score default, Porter stemmer (use_stemmer=True)"
                                                    : "rouge_score default, no stemmer"}};
        lines.push_back(r.format() + (rouge_stemmer ? " (stemmed)" : ""));
      }
    }
    if (as_json) {
      std::cout << out.dump(2) << "\n";
    } else {
      for (const auto& l : lines) std::cout << l << "\n";
    }
  } catch (const std::exception& e) {
    std::cerr << "ordo-evaluate: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
