// ordo — translating text longer than a sentence. Sentence-level models (opus-mt and most
// others) translate one sentence well and a paragraph badly, so paragraphs and documents are
// split into sentences with ICU's sentence-boundary rules for the source language (with its
// abbreviation suppressions: "Mr." and "z.B." do not end a sentence), the sentences of all
// units are translated as one stream of length-sorted batches, and each unit is rejoined with
// its original spacing and line structure: only the sentences change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ordo/alignment.h"
#include "ordo/export.h"
#include "ordo/options.h"
#include "ordo/translator.h"

namespace ordo {

// Bytes [begin, end) of one sentence in a UTF-8 text.
struct SentenceSpan {
  size_t begin = 0, end = 0;
};

// The sentences of `text`, in order, each trimmed of surrounding white space; the text between
// them (spaces, line breaks) separates them. A single line break inside a paragraph is a soft
// wrap, not a boundary; a blank line always is. `language`: a language code as models name it
// ("en", "deu", "__de__", "deu_Latn"; "" = ICU's root rules). Throws ordo::Error on invalid
// UTF-8.
ORDO_API std::vector<SentenceSpan> split_sentences(const std::string& text, const std::string& language);

// How line breaks cut a text into sentences.
enum class LineBreaks {
  kSoftWrap,  // as split_sentences(): a single line break inside a paragraph is a soft wrap
  kEndLine,   // each line is cut on its own: a line break always ends a sentence
};

// A text cut into the sentences to translate and the text around them (split_sentences(),
// per line with LineBreaks::kEndLine); rebuild() puts translations in the sentences' places and
// keeps every other byte (spaces, line breaks, the CR of a CR LF) as it was. The one
// split-and-rejoin of plain text: translate_documents() uses it, and so does `ordo serve`'s
// format=text, which batches the sentences of many requests itself. Throws ordo::Error on
// invalid UTF-8.
class ORDO_API SentenceLayout {
 public:
  SentenceLayout(const std::string& text, const std::string& language, LineBreaks breaks = LineBreaks::kSoftWrap);

  // Where the sentences are in the text, in order.
  const std::vector<SentenceSpan>& spans() const { return spans_; }
  // The sentences as the model sees them: a line break inside one (a soft wrap) is a space.
  const std::vector<std::string>& sentences() const { return sentences_; }
  // The text with sentence i replaced by translations[i] (by nothing when there are fewer).
  std::string rebuild(const std::vector<std::string>& translations) const;

 private:
  std::string text_;
  std::vector<SentenceSpan> spans_;
  std::vector<std::string> sentences_;
};

struct DocumentTranslation {
  std::string text;                        // the unit, each sentence replaced by its translation
  std::vector<SentenceSpan> sentences;     // where the source sentences are in the unit
  std::vector<TranslationResult> results;  // per sentence: hypotheses, scores, truncation
};

// Translates each unit (a line, paragraph or document) sentence by sentence, as above. The
// sentence rules follow `language`, else options.source_lang, else the model folder's
// tokenizer_config.json (source_lang / src_lang), else ICU's root rules. Only the best
// hypothesis of each sentence is joined into `text`.
ORDO_API std::vector<DocumentTranslation> translate_documents(const Translator& translator,
                                                              const std::vector<std::string>& units,
                                                              const DecodeOptions& options = {},
                                                              const std::string& language = "",
                                                              const BatchOptions& batching = {});

// ---------------------------------------------------------------- HTML
// Web pages are translated block by block: the text of each block-level element (p, li, td,
// h1, title, ...) is cut into sentences, and a sentence is translated whole even when inline
// elements (<b>, <a href>, <span>, ...) cut through it; each inline element is then put back
// around the target words its source words align to (the model's own cross-attention, as
// word_alignment() gives it). Everything that is not translated text (tags with their
// attributes, comments, the doctype, entities of untranslated text, white space between
// blocks, script/style/pre/code) is copied from the source byte for byte: Gumbo, a complete
// HTML5 parser, says where each node lies in the source, and only the bytes of the blocks'
// text are rewritten.

// Bounds on the work one HTML input may cause (pages are untrusted: a server's clients send
// them). The parser's cost is not linear in the page (unclosed formatting tags are reopened,
// scope checks walk the nesting), so a page is scanned before it is parsed and refused, with
// an ordo::Error naming the limit ("HTML input: ... (limit max_depth 512)"), when it exceeds
// one of these; the parse itself runs within a memory budget and a deadline. The defaults
// pass ordinary pages with a wide margin (a book-length page: 24,500 elements, depth under 30).
struct HtmlLimits {
  size_t max_bytes = 16u << 20;           // size of the page
  size_t max_elements = 500000;           // start tags, implied ones included
  size_t max_depth = 512;                 // elements open at once (nesting)
  size_t max_attributes = 256;            // attributes of one element
  size_t max_total_attributes = 1000000;  // attributes of all elements
  size_t max_open_formatting = 100;       // formatting elements (a, b, i, font, ...) left open
  size_t max_memory = 0;                  // parser memory in bytes; 0 = 16 MiB + 128 per input byte
  // Parser memory of all the pages this process parses at once (a server's concurrent
  // requests): a parse that would go past it fails like one past max_memory.
  size_t max_memory_all_parses = 512u << 20;
  double max_seconds = 10;  // parse time
};

// One sentence's translation as the HTML layout needs it.
struct AlignedTranslation {
  std::string text;
  // Source word - target word links (word_alignment()); words are cut at white space and the
  // counts below are the words the model's pieces make. With no links, inline elements are
  // placed by relative position.
  std::vector<AlignmentLink> words;
  int64_t source_words = 0, target_words = 0;
};

// The best (or `hypothesis`-th) translation of a result and its word alignment (empty without
// DecodeOptions::return_attention).
ORDO_API AlignedTranslation aligned_translation(const TranslationResult& result, size_t hypothesis = 0);

// An HTML document or fragment cut into the sentences to translate; rebuild() puts the
// translations back. Used by translate_html() and by `ordo serve`'s format=html, which
// batches the sentences of many requests itself.
class ORDO_API HtmlDocument {
 public:
  // `language`: the source language, for the sentence rules ("" = ICU's root rules). Throws
  // ordo::Error naming the limit when `html` exceeds one of `limits`.
  HtmlDocument(const std::string& html, const std::string& language, const HtmlLimits& limits = {});
  ~HtmlDocument();
  HtmlDocument(HtmlDocument&&) noexcept;
  HtmlDocument& operator=(HtmlDocument&&) noexcept;

  // The sentences to translate, in document order, entities decoded, line breaks as spaces.
  // Sentences of only punctuation or symbols ("|", "»") are left as they are.
  const std::vector<std::string>& sentences() const;
  // Whether some sentence has inline markup in it (then word alignments place it better:
  // translate with DecodeOptions::return_attention).
  bool needs_alignment() const;
  // The source with sentence i replaced by translations[i] (HTML-escaped) and the inline
  // markup of each block placed around the aligned target words.
  std::string rebuild(const std::vector<AlignedTranslation>& translations) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Translates an HTML document or fragment as above (return_attention is set when inline
// markup needs it). The sentence rules follow `language` as in translate_documents(). Throws
// ordo::Error naming the limit when `html` exceeds one of `limits`.
ORDO_API std::string translate_html(const Translator& translator, const std::string& html,
                                    const DecodeOptions& options = {}, const std::string& language = "",
                                    const HtmlLimits& limits = {});

// ---------------------------------------------------------------- long documents
// A document longer than the model's positions (Translator::max_source_tokens) is summarized
// in parts: cut at sentence boundaries into chunks that fit, each summarized (all the chunks
// of all documents in one call, so they share batches), and the chunk summaries joined. When
// the joined summaries are still longer than the model takes, they are cut and summarized the
// same way again, until they fit. The joined summaries are the result: a further pass of a
// summarizer over summaries keeps their first part and drops the rest (docs/cli.md has the
// measure). A document that fits is summarized exactly as Translator::translate does.

enum class LongInput {
  kChunk,     // summarize in parts, as above
  kTruncate,  // cut to the model's positions (TranslationResult::truncated_tokens says how much)
  kRefuse,    // throw ordo::Error naming the input
};

struct ChunkProgress {
  size_t round = 1;  // 1: the document's chunks; 2 and on: summaries of summaries
  size_t done = 0;   // chunks of this round summarized so far
  size_t total = 0;  // chunks in this round (of every long document of the call)
};

struct LongInputOptions {
  LongInput mode = LongInput::kChunk;
  // Source tokens per chunk, special tokens and a task's prefix included: 0 = the model's
  // positions; at least 32 and at most the model's positions.
  int64_t chunk_tokens = 0;
  // Called after each chunk is summarized, from the decoding threads.
  std::function<void(const ChunkProgress&)> on_progress;
};

// A text cut into chunks of at most `limit` tokens by `count` (the tokens of a piece of the
// text as the model would see it): whole sentences (`language`'s rules, as split_sentences); a
// paragraph's end (a blank line) ends a chunk that holds a quarter of the limit already; inside
// a paragraph, a chunk starts with the last sentence of the one before when that is short (a
// quarter of the limit at most). A sentence longer than the limit is cut between words, a word
// longer than that between characters. The chunks' byte ranges in `text`, in order; none for a text
// without any. Throws ordo::Error on invalid UTF-8.
ORDO_API std::vector<SentenceSpan> chunk_text(const std::string& text, const std::string& language, size_t limit,
                                              const std::function<size_t(const std::string&)>& count);

// Summarizes each document as above (`options` as for Translator::translate; the sentence
// rules follow options.source_lang, else ICU's root rules). A long document's result has one
// hypothesis: the joined summaries of its last round, their tokens and ids one after another,
// and the mean of their scores. Throws ordo::Error for a chunk size outside its bounds, and
// with LongInput::kRefuse for a document longer than the model takes (naming its input when
// there are several).
ORDO_API std::vector<TranslationResult> summarize_documents(const Translator& translator,
                                                            const std::vector<std::string>& documents,
                                                            const DecodeOptions& options = {},
                                                            const LongInputOptions& long_input = {},
                                                            const BatchOptions& batching = {});

// How summarize_documents runs the model: `texts` with `options`, one result per text, as
// Translator::translate. A server passes its own (its batches and deadlines); the overload
// above calls translator.translate with `batching`.
using TranslateCall =
    std::function<std::vector<TranslationResult>(const std::vector<std::string>& texts, const DecodeOptions& options)>;
ORDO_API std::vector<TranslationResult> summarize_documents(const Translator& translator,
                                                            const std::vector<std::string>& documents,
                                                            const DecodeOptions& options,
                                                            const LongInputOptions& long_input,
                                                            const TranslateCall& translate);

// "chunk", "truncate" or "refuse" (the CLI's --long-input, the server's and Python's
// long_input); throws ordo::Error naming `field` otherwise.
ORDO_API LongInput parse_long_input(const std::string& value, const std::string& field);

}  // namespace ordo
