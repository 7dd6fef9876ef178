// A call's inputs split into parts that run apart, and the parts' results put back in input
// order: the inputs with no text (not run), target prefixes of different lengths (each length
// is one generate() call), a glossary's groups (each with its own forced phrases). One gather
// and one scatter for all of them, so that no part can lose an input or misnumber the input of
// a streamed event (DecodeOptions::on_token).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "ordo/options.h"
#include "pipeline/token_stream.h"

namespace ordo::pipeline {

using Part = std::vector<size_t>;  // indices into the call's inputs, in order

// The inputs 0 .. count-1 grouped by key(i), the groups in the order of their first input.
template <class Key>
std::vector<Part> group_by(size_t count, Key&& key) {
  std::vector<Part> parts;
  std::vector<decltype(key(size_t{0}))> keys;
  for (size_t i = 0; i < count; ++i) {
    const auto this_key = key(i);
    size_t k = 0;
    while (k < keys.size() && !(keys[k] == this_key)) ++k;
    if (k == keys.size()) {
      keys.push_back(this_key);
      parts.emplace_back();
    }
    parts[k].push_back(i);
  }
  return parts;
}

// The elements of `all` at `part`, in its order; none when `all` is empty (an optional
// per-input list, such as target prefixes).
template <class T>
std::vector<T> gather(const std::vector<T>& all, const Part& part) {
  std::vector<T> out;
  if (all.empty()) return out;
  out.reserve(part.size());
  for (size_t i : part) out.push_back(all[i]);
  return out;
}

// Runs run(part_number, part, part_options) for each part, where part_options are `options`
// with streamed events numbered as the call's inputs, and puts each part's results (one per
// index of its part) at their inputs; an input in no part gets `fill`. A single part that
// holds every input in order runs with `options` as they are.
template <class Result, class Run>
std::vector<Result> run_parts(size_t count, const std::vector<Part>& parts, const DecodeOptions& options, Run&& run,
                              const Result& fill = Result()) {
  if (parts.size() == 1 && parts[0].size() == count) {
    bool identity = true;
    for (size_t i = 0; i < count && identity; ++i) identity = parts[0][i] == i;
    if (identity) return run(size_t{0}, parts[0], options);
  }
  std::vector<Result> all(count, fill);
  for (size_t p = 0; p < parts.size(); ++p) {
    std::vector<Result> done = run(p, parts[p], with_stream_inputs(options, parts[p]));
    for (size_t k = 0; k < parts[p].size(); ++k) all[parts[p][k]] = std::move(done[k]);
  }
  return all;
}

}  // namespace ordo::pipeline
