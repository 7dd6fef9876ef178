// ordo-vmap: builds a vocabulary shortlist map (vmap.txt, CTranslate2's format; read with
// DecodeOptions::use_vmap / --use-vmap true) from a parallel corpus, tokenized as the model
// tokenizes. Marian's lexical shortlist recipe on sentence co-occurrence counts instead of a
// word aligner: the --always most frequent target pieces go on every batch's list (the empty
// key), and each source piece gets its --per-source target pieces of highest p(t|s) = c(s,t) /
// c(s) (seen together in at least --min-count pairs), plus the target piece spelled as itself
// (names, numbers). Keep test sets out of the corpus.
//
//   ordo-vmap -m MODEL --source train.en --target train.de [-o MODEL/vmap.txt]
#include <algorithm>
#include <fstream>
#include <iostream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <CLI/CLI.hpp>

#include "io/model_config.h"
#include "models/family.h"
#include "ordo/error.h"
#include "pipeline/tokenizer_loading.h"
#include "pipeline/vocab_map.h"

namespace {

struct Args {
  std::string model, source, target, output;
  int64_t always = 100, per_source = 75, min_count = 2, max_lines = 0;
};

int run(const Args& a) {
  using namespace ordo;
  const io::ModelConfig config = io::load_model_config(a.model + "/config.json");
  const models::FamilySpec family = models::family_for(config);
  const std::unique_ptr<text::Tokenizer> tokenizer = pipeline::load_tokenizer(a.model, family, config);
  const text::Tokenizer::Framing framing = tokenizer->framing();
  std::ifstream source(a.source), target(a.target);
  if (!source) throw Error(a.source + ": cannot open");
  if (!target) throw Error(a.target + ": cannot open");

  std::unordered_map<int64_t, int64_t> source_count, target_count;
  std::unordered_map<uint64_t, int64_t> pair_count;  // source id << 32 | target id
  std::string s_line, t_line;
  int64_t lines = 0;
  while (std::getline(source, s_line)) {
    if (!std::getline(target, t_line)) throw Error(a.target + ": fewer lines than " + a.source);
    ++lines;
    if (a.max_lines > 0 && lines > a.max_lines) break;
    const std::string where = " line " + std::to_string(lines);
    std::vector<int64_t> s_ids, t_ids;
    try {
      s_ids = tokenizer->encode(s_line);
      t_ids = tokenizer->encode_target(t_line);
    } catch (const Error& e) {
      throw Error(a.source + " / " + a.target + where + ": " + e.what());
    }
    const size_t before = static_cast<size_t>(framing.before), after = static_cast<size_t>(framing.after);
    if (s_ids.size() < before + after) continue;
    std::unordered_set<int64_t> s_set(s_ids.begin() + static_cast<std::ptrdiff_t>(before),
                                      s_ids.end() - static_cast<std::ptrdiff_t>(after));
    std::unordered_set<int64_t> t_set(t_ids.begin(), t_ids.end());
    for (int64_t s : s_set) ++source_count[s];
    for (int64_t t : t_set) ++target_count[t];
    for (int64_t s : s_set)
      for (int64_t t : t_set) ++pair_count[static_cast<uint64_t>(s) << 32 | static_cast<uint64_t>(t)];
  }
  if (lines == 0) throw Error(a.source + ": no lines");

  // The most frequent targets: every batch's list.
  std::vector<std::pair<int64_t, int64_t>> by_count;  // (count, id)
  for (const auto& [id, count] : target_count) by_count.push_back({count, id});
  std::sort(by_count.begin(), by_count.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  std::unordered_set<int64_t> always;
  for (size_t i = 0; i < by_count.size() && static_cast<int64_t>(i) < a.always; ++i) always.insert(by_count[i].second);

  std::unordered_map<int64_t, std::vector<std::pair<double, int64_t>>> choices;  // source -> (p(t|s), t)
  for (const auto& [key, count] : pair_count) {
    if (count < a.min_count) continue;
    const int64_t s = static_cast<int64_t>(key >> 32), t = static_cast<int64_t>(key & 0xffffffffu);
    if (always.count(t)) continue;
    choices[s].push_back({static_cast<double>(count) / static_cast<double>(source_count[s]), t});
  }
  const pipeline::PieceIds target_ids = pipeline::target_piece_ids(*tokenizer, config.decoder_vocab_size);
  std::ofstream out(a.output);
  if (!out) throw Error(a.output + ": cannot write");
  std::vector<int64_t> always_sorted(always.begin(), always.end());
  std::sort(always_sorted.begin(), always_sorted.end());
  out << '\t';
  for (size_t i = 0; i < always_sorted.size(); ++i) out << (i ? " " : "") << tokenizer->target_piece(always_sorted[i]);
  out << '\n';
  std::vector<int64_t> sources;
  for (const auto& [id, count] : source_count) sources.push_back(id);
  std::sort(sources.begin(), sources.end());
  size_t entries = 0;
  for (int64_t s : sources) {
    std::vector<std::pair<double, int64_t>>& list = choices[s];
    std::sort(list.begin(), list.end(), [](const auto& x, const auto& y) {
      return x.first != y.first ? x.first > y.first : x.second < y.second;
    });
    if (static_cast<int64_t>(list.size()) > a.per_source) list.resize(static_cast<size_t>(a.per_source));
    std::vector<int64_t> targets;
    for (const auto& [p, t] : list) targets.push_back(t);
    const std::string piece = tokenizer->source_piece(s);
    if (const auto same = target_ids.find(piece);
        same != target_ids.end() && !always.count(same->second) &&
        std::find(targets.begin(), targets.end(), same->second) == targets.end())
      targets.push_back(same->second);
    if (targets.empty()) continue;
    out << piece << '\t';
    for (size_t i = 0; i < targets.size(); ++i) out << (i ? " " : "") << tokenizer->target_piece(targets[i]);
    out << '\n';
    entries += targets.size();
  }
  if (!out) throw Error(a.output + ": write failed");
  std::cerr << "ordo-vmap: " << lines << " pairs, " << always.size() << " targets always, " << sources.size()
            << " source pieces with " << entries << " targets -> " << a.output << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ordo-vmap: a vocabulary shortlist map (vmap.txt) from a parallel corpus, for --use-vmap"};
  Args a;
  app.add_option("-m,--model", a.model, "Model folder (its tokenizer reads the corpus)")
      ->required()
      ->check(CLI::ExistingDirectory);
  app.add_option("--source", a.source, "Source side, one segment per line")->required();
  app.add_option("--target", a.target, "Target side, aligned line by line")->required();
  app.add_option("-o,--output", a.output, "Output file (default: MODEL/vmap.txt)");
  app.add_option("--always", a.always, "Most frequent target pieces put on every list")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app.add_option("--per-source", a.per_source, "Target pieces per source piece, by p(t|s)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 24));
  app.add_option("--min-count", a.min_count, "Pairs a source and a target piece must share")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  app.add_option("--max-lines", a.max_lines, "Read at most N pairs (0 = all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40));
  CLI11_PARSE(app, argc, argv);
  if (a.output.empty()) a.output = a.model + "/vmap.txt";
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "ordo-vmap: error: " << e.what() << "\n";
    return 1;
  }
}
