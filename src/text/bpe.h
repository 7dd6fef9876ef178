// BPE merges as Hugging Face's slow tokenizers apply them (FSMTTokenizer.bpe, the GPT-2 /
// RoBERTa / BART bpe): a word starts as its code points; the adjacent pair with the lowest
// merges.txt rank is merged everywhere in the word, until no adjacent pair has a rank.
// One class for both readers of merges.txt; they differ only in the file's first line, how
// strict a line is read, and FSMT's "</w>" end-of-word marker.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace ordo::text {

class BpeMerges {
 public:
  struct Format {
    // GPT-2's files start with "#version: 0.2", which is not a merge (HF: split("\n")[1:-1]).
    bool header_line = false;
    // GPT-2: every line holds two symbols (a blank line is skipped), anything else is an
    // ordo::Error naming the file and line. FSMT: lines with fewer fields are skipped and a
    // third field (a count) is ignored, as HF does.
    bool strict = false;
    std::string end_of_word;  // appended to the last symbol of a word: "</w>" for FSMT
  };

  // Reads `path` (ordo::Error naming it when missing, not UTF-8 or, if strict, malformed).
  BpeMerges(const std::string& path, const Format& format);

  // The pieces of `token` (its code points, merged). Results are cached (thread-safe, bounded).
  std::vector<std::string> apply(const std::string& token) const;

  size_t size() const { return ranks_.size(); }

 private:
  std::vector<std::string> merge(const std::string& token) const;

  std::string path_;
  Format format_;
  std::unordered_map<std::string, int64_t> ranks_;  // "first\x1fsecond" -> rank
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::string>> cache_;
};

}  // namespace ordo::text
