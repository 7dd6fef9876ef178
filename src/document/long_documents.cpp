// Documents longer than the model's positions (ordo/document.h): chunks that fit, summarized in
// rounds until the joined summaries fit.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "ordo/document.h"
#include "ordo/text.h"

namespace ordo {
namespace {

using Count = std::function<size_t(const std::string&)>;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// The largest of `ends` (ascending, each past `begin`) where text[begin, end) fits `limit`;
// `begin` when none does. Token counts grow with the text, so a binary search finds it.
size_t longest_fit(const std::string& text, size_t begin, const std::vector<size_t>& ends, size_t limit,
                   const Count& count) {
  size_t low = 0, high = ends.size(), best = begin;  // the answer's index is in [low, high)
  while (low < high) {
    const size_t mid = low + (high - low) / 2;
    if (count(text.substr(begin, ends[mid] - begin)) <= limit) {
      best = ends[mid];
      low = mid + 1;
    } else {
      high = mid;
    }
  }
  return best;
}

// A sentence longer than `limit` as pieces that fit: cut after whole words, a word longer than
// the limit after whole characters (one character at least, so that the cutting ends).
std::vector<SentenceSpan> cut_long(const std::string& text, SentenceSpan sentence, size_t limit, const Count& count) {
  std::vector<SentenceSpan> out;
  size_t at = sentence.begin;
  while (true) {
    while (at < sentence.end && is_space(text[at])) ++at;
    if (at >= sentence.end) return out;
    // A piece of `limit` tokens spans at most 64 bytes a token (SentencePiece's longest piece,
    // 16 characters of 4 bytes): no cut past that is tried.
    const size_t reach = std::min(sentence.end, at + limit * 64);
    std::vector<size_t> word_ends;
    for (size_t p = at + 1; p <= reach; ++p)
      if (!is_space(text[p - 1]) && (p == sentence.end || is_space(text[p]))) word_ends.push_back(p);
    size_t end = word_ends.empty() ? at : longest_fit(text, at, word_ends, limit, count);
    if (end == at) {  // the first word alone is too long: its characters
      const size_t word_end = word_ends.empty() ? reach : word_ends.front();
      std::vector<size_t> char_ends;
      for (size_t p = at + 1; p <= word_end; ++p)
        if (p == sentence.end || (static_cast<unsigned char>(text[p]) & 0xC0) != 0x80) char_ends.push_back(p);
      end = std::max(longest_fit(text, at, char_ends, limit, count), char_ends.front());
    }
    out.push_back({at, end});
    at = end;
  }
}

// The best hypothesis of each chunk of one document, joined: the document's result.
TranslationResult joined(const std::vector<const TranslationResult*>& chunks) {
  TranslationResult out;
  Hypothesis h;
  double score = 0.0;
  for (const TranslationResult* r : chunks) {
    if (r->hypotheses.empty()) continue;
    const Hypothesis& best = r->hypotheses[0];
    if (best.text.empty()) continue;
    h.text += (h.text.empty() ? "" : " ") + best.text;
    h.tokens.insert(h.tokens.end(), best.tokens.begin(), best.tokens.end());
    h.ids.insert(h.ids.end(), best.ids.begin(), best.ids.end());
    score += best.score;
  }
  h.score = chunks.empty() ? 0.0f : static_cast<float>(score / static_cast<double>(chunks.size()));
  out.hypotheses.push_back(std::move(h));
  return out;
}

}  // namespace

std::vector<SentenceSpan> chunk_text(const std::string& text, const std::string& language, size_t limit,
                                     const Count& count) {
  check_utf8(text, "document");
  const auto tokens = [&](size_t begin, size_t end) { return count(text.substr(begin, end - begin)); };
  std::vector<SentenceSpan> sentences;
  for (const SentenceSpan& s : split_sentences(text, language)) {
    if (tokens(s.begin, s.end) <= limit) {
      sentences.push_back(s);
      continue;
    }
    for (const SentenceSpan& piece : cut_long(text, s, limit, count)) sentences.push_back(piece);
  }
  // Whether a blank line (a paragraph's end) lies between sentence k - 1 and sentence k.
  const auto paragraph_before = [&](size_t k) {
    const std::string gap = text.substr(sentences[k - 1].end, sentences[k].begin - sentences[k - 1].end);
    const size_t first = gap.find('\n');
    return first != std::string::npos && gap.find('\n', first + 1) != std::string::npos;
  };
  std::vector<SentenceSpan> chunks;
  size_t i = 0;
  while (i < sentences.size()) {
    SentenceSpan chunk = sentences[i];
    size_t next = i + 1;
    // Whole sentences while they fit; a paragraph's end closes a chunk that holds a quarter of
    // the limit already (a summarizer sums up the start of what it reads: a chunk of several
    // topics would lose all but its first).
    while (next < sentences.size() && tokens(chunk.begin, sentences[next].end) <= limit &&
           !(paragraph_before(next) && tokens(chunk.begin, chunk.end) * 4 >= limit))
      chunk.end = sentences[next++].end;
    chunks.push_back(chunk);
    if (next >= sentences.size()) break;
    // The next chunk starts with this one's last sentence when it is short, leaves room, and
    // is of the same paragraph.
    const SentenceSpan& last = sentences[next - 1];
    const bool overlap = next - 1 > i && !paragraph_before(next) && tokens(last.begin, last.end) * 4 <= limit &&
                         tokens(last.begin, sentences[next].end) <= limit;
    i = overlap ? next - 1 : next;
  }
  return chunks;
}

LongInput parse_long_input(const std::string& value, const std::string& field) {
  if (value == "chunk") return LongInput::kChunk;
  if (value == "truncate") return LongInput::kTruncate;
  if (value == "refuse") return LongInput::kRefuse;
  throw Error(field + " is '" + value + "': expected chunk, truncate or refuse");
}

std::vector<TranslationResult> summarize_documents(const Translator& translator,
                                                   const std::vector<std::string>& documents,
                                                   const DecodeOptions& options, const LongInputOptions& long_input,
                                                   const BatchOptions& batching) {
  return summarize_documents(translator, documents, options, long_input,
                             [&](const std::vector<std::string>& texts, const DecodeOptions& o) {
                               return translator.translate(texts, o, batching);
                             });
}

std::vector<TranslationResult> summarize_documents(const Translator& translator,
                                                   const std::vector<std::string>& documents,
                                                   const DecodeOptions& options, const LongInputOptions& long_input,
                                                   const TranslateCall& translate) {
  const int64_t positions = translator.max_source_tokens();
  if (long_input.chunk_tokens != 0 && (long_input.chunk_tokens < 32 || long_input.chunk_tokens > positions))
    throw Error("chunk_tokens " + std::to_string(long_input.chunk_tokens) + ": a chunk holds from 32 to " +
                std::to_string(positions) + " tokens (the model's positions)");
  const size_t limit = static_cast<size_t>(long_input.chunk_tokens != 0 ? long_input.chunk_tokens : positions);
  const Count count = [&](const std::string& piece) { return translator.encode(piece, options).size(); };
  std::vector<size_t> long_documents;
  for (size_t i = 0; i < documents.size(); ++i) {
    check_utf8(documents[i], "input " + std::to_string(i + 1));
    if (!has_text(documents[i])) continue;
    const size_t tokens = count(documents[i]);
    if (tokens <= static_cast<size_t>(positions)) continue;
    if (long_input.mode == LongInput::kRefuse)
      throw Error((documents.size() > 1 ? "input " + std::to_string(i + 1) + ": " : std::string()) +
                  "the document has " + std::to_string(tokens) + " tokens, more than the " + std::to_string(positions) +
                  " the model takes (summarize it in chunks, or truncate it)");
    long_documents.push_back(i);
  }
  if (long_documents.empty() || long_input.mode == LongInput::kTruncate) return translate(documents, options);

  // The documents that fit, as Translator::translate does them.
  std::vector<TranslationResult> results(documents.size());
  std::vector<std::string> short_documents;
  std::vector<size_t> short_positions;
  for (size_t i = 0; i < documents.size(); ++i)
    if (!std::binary_search(long_documents.begin(), long_documents.end(), i)) {
      short_documents.push_back(documents[i]);
      short_positions.push_back(i);
    }
  if (!short_documents.empty()) {
    std::vector<TranslationResult> done = translate(short_documents, options);
    for (size_t k = 0; k < done.size(); ++k) results[short_positions[k]] = std::move(done[k]);
  }

  // The long ones in rounds: all their chunks in one call, each document's summaries joined,
  // cut and summarized again while they are longer than a chunk. A round that does not shorten
  // a document (a model that writes as much as it reads) ends it.
  const std::string language = options.source_lang.value_or("");
  std::vector<std::string> texts;
  for (size_t i : long_documents) texts.push_back(documents[i]);
  std::vector<bool> finished(texts.size(), false);
  for (size_t round = 1; std::find(finished.begin(), finished.end(), false) != finished.end(); ++round) {
    std::vector<std::string> chunks;
    std::vector<size_t> owner;
    for (size_t k = 0; k < texts.size(); ++k) {
      if (finished[k]) continue;
      for (const SentenceSpan& span : chunk_text(texts[k], language, limit, count)) {
        chunks.push_back(texts[k].substr(span.begin, span.end - span.begin));
        owner.push_back(k);
      }
    }
    DecodeOptions o = options;
    o.on_token = nullptr;
    if (long_input.on_progress) {
      // Owned by the callback: a server's batch may finish after its request gave up.
      auto summarized = std::make_shared<std::atomic<size_t>>(0);
      o.on_token = [summarized, progress = long_input.on_progress, round, total = chunks.size()](const TokenEvent& e) {
        if (e.done) progress({round, ++*summarized, total});
        return true;
      };
    }
    const std::vector<TranslationResult> summaries = translate(chunks, o);
    for (size_t k = 0; k < texts.size(); ++k) {
      if (finished[k]) continue;
      std::vector<const TranslationResult*> parts;
      for (size_t c = 0; c < chunks.size(); ++c)
        if (owner[c] == k) parts.push_back(&summaries[c]);
      TranslationResult result = joined(parts);
      const std::string& text = result.hypotheses[0].text;
      if (count(text) <= limit || text.size() >= texts[k].size()) {
        results[long_documents[k]] = std::move(result);
        finished[k] = true;
      } else {
        texts[k] = text;
      }
    }
  }
  return results;
}

}  // namespace ordo
