#include "train/corpus.h"

#include <algorithm>
#include <fstream>
#include <numeric>

#include "io/json_file.h"
#include "ordo/error.h"

namespace ordo::train {
namespace {}  // namespace

std::vector<std::string> read_text_column(const std::string& spec, int64_t limit) {
  const size_t hash = spec.rfind('#');
  const std::string path = hash == std::string::npos ? spec : spec.substr(0, hash);
  const std::string field = hash == std::string::npos ? "" : spec.substr(hash + 1);
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot open");
  std::vector<std::string> lines;
  int64_t number = 0;
  for (std::string line; std::getline(in, line) && (limit <= 0 || static_cast<int64_t>(lines.size()) < limit);) {
    ++number;
    if (field.empty()) {
      lines.push_back(line);
      continue;
    }
    const nlohmann::json json = io::parse_json_text(line, path + " line " + std::to_string(number));
    if (!json.is_object() || !json.contains(field) || !json[field].is_string())
      throw Error(path + " line " + std::to_string(number) + ": field '" + field + "' is missing or not a string");
    std::string text = json[field].get<std::string>();
    for (char& c : text)
      if (c == '\n' || c == '\r') c = ' ';
    lines.push_back(std::move(text));
  }
  return lines;
}

std::vector<Example> load_parallel(const std::string& source_path, const std::string& target_path,
                                   const text::Tokenizer& tokenizer, int64_t max_tokens, int64_t* skipped) {
  const auto sources = read_text_column(source_path), targets = read_text_column(target_path);
  if (sources.size() != targets.size())
    throw Error(source_path + " has " + std::to_string(sources.size()) + " lines but " + target_path + " has " +
                std::to_string(targets.size()));
  std::vector<Example> examples;
  *skipped = 0;
  for (size_t i = 0; i < sources.size(); ++i) {
    Example e;
    e.source = tokenizer.encode(sources[i]);  // ends with </s>
    e.target = tokenizer.encode(targets[i]);
    if (static_cast<int64_t>(std::max(e.source.size(), e.target.size())) > max_tokens || e.source.size() < 2 ||
        e.target.size() < 2) {
      ++*skipped;
      continue;
    }
    examples.push_back(std::move(e));
  }
  return examples;
}

Batcher::Batcher(const std::vector<Example>& examples, int64_t max_tokens, const MarianVocab& vocab)
    : examples_(examples), max_tokens_(max_tokens), vocab_(vocab) {}

std::vector<std::vector<size_t>> Batcher::epoch_order(uint64_t seed, int64_t epoch) const {
  std::mt19937_64 rng(seed * 1000003 + static_cast<uint64_t>(epoch));
  // Shuffle first so equal lengths mix, then sort by length (stable) and cut into batches.
  std::vector<size_t> order(examples_.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::make_pair(examples_[a].source.size(), examples_[a].target.size()) <
           std::make_pair(examples_[b].source.size(), examples_[b].target.size());
  });
  std::vector<std::vector<size_t>> batches;
  std::vector<size_t> current;
  size_t longest = 0;
  for (size_t index : order) {
    const size_t len = std::max(examples_[index].source.size(), examples_[index].target.size());
    const size_t longest_if_added = std::max(longest, len);
    if (!current.empty() && static_cast<int64_t>(longest_if_added * (current.size() + 1)) > max_tokens_) {
      batches.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(index);
    longest = std::max(longest, len);
  }
  if (!current.empty()) batches.push_back(std::move(current));
  std::shuffle(batches.begin(), batches.end(), rng);
  return batches;
}

Batch Batcher::make(const std::vector<size_t>& members) const {
  size_t src_len = 0, tgt_len = 0;
  for (size_t i : members) {
    src_len = std::max(src_len, examples_[i].source.size());
    tgt_len = std::max(tgt_len, examples_[i].target.size());
  }
  const int64_t n = static_cast<int64_t>(members.size());
  Batch b;
  b.source = at::full({n, static_cast<int64_t>(src_len)}, vocab_.pad, at::kLong);
  b.source_mask = at::zeros({n, static_cast<int64_t>(src_len)}, at::kLong);
  b.decoder_input = at::full({n, static_cast<int64_t>(tgt_len)}, vocab_.pad, at::kLong);
  b.labels = at::full({n, static_cast<int64_t>(tgt_len)}, vocab_.pad, at::kLong);
  auto src = b.source.accessor<int64_t, 2>();
  auto mask = b.source_mask.accessor<int64_t, 2>();
  auto dec = b.decoder_input.accessor<int64_t, 2>();
  auto lab = b.labels.accessor<int64_t, 2>();
  for (int64_t r = 0; r < n; ++r) {
    const Example& e = examples_[members[r]];
    for (size_t t = 0; t < e.source.size(); ++t) src[r][t] = e.source[t], mask[r][t] = 1;
    // Marian starts decoding from <pad>; the decoder sees the target shifted right.
    for (size_t t = 0; t < e.target.size(); ++t) {
      lab[r][t] = e.target[t];
      if (t + 1 < e.target.size()) dec[r][t + 1] = e.target[t];
    }
    b.target_tokens += static_cast<int64_t>(e.target.size());
    b.source_tokens += static_cast<int64_t>(e.source.size());
  }
  return b;
}

}  // namespace ordo::train
