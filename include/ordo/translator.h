// ordo — translate text with an encoder-decoder model loaded from a Hugging Face folder.
//
//   ordo::Translator tr("models/opus-mt-en-de");
//   auto results = tr.translate({"Hello world."});
//   std::cout << results[0].hypotheses[0].text << "\n";
//
// A Translator loads the model once; translate() is const and may be called from several
// threads at once (weights are shared read-only, each call keeps its own decoding state).
#pragma once

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "ordo/error.h"
#include "ordo/options.h"
#include "ordo/preset.h"

namespace ordo {

class ORDO_API Translator {
 public:
  // Loads config.json, generation_config.json, model.safetensors and the tokenizer files
  // from `model_dir`. Throws ordo::Error naming the file and field at fault.
  explicit Translator(const std::string& model_dir, const ModelOptions& model_options = {});
  ~Translator();
  // A moved-from Translator holds no model: every call on it throws ordo::Error.
  Translator(Translator&&) noexcept;
  Translator& operator=(Translator&&) noexcept;
  Translator(const Translator&) = delete;
  Translator& operator=(const Translator&) = delete;

  // Translates each sentence (UTF-8; invalid UTF-8 throws). Results are in input order.
  // A sentence with no text (empty, or only white space, control or invisible format
  // characters: ordo::has_text) is not run; it gets one empty hypothesis with score 0.
  // `target_prefixes`, when not empty, holds one target text per sentence that its
  // translation starts with ("" = none), as DecodeOptions::target_prefix does for all.
  std::vector<TranslationResult> translate(const std::vector<std::string>& sentences, const DecodeOptions& options = {},
                                           const BatchOptions& batching = {},
                                           const std::vector<std::string>& target_prefixes = {}) const;

  // translate() on a thread of its own, CTranslate2's asynchronous translate_batch: the future
  // holds the results, or the call's ordo::Error. The arguments are copied. The Translator must
  // outlive the call: destroying the future (or waiting on it) waits for it. Stop a call early
  // with DecodeOptions::cancelled.
  std::future<std::vector<TranslationResult>> translate_async(std::vector<std::string> sentences,
                                                              DecodeOptions options = {}, BatchOptions batching = {},
                                                              std::vector<std::string> target_prefixes = {}) const;

  // The same on already tokenized source ids (each ending with </s>), for callers that
  // tokenize themselves and for id-level parity tests. A source with no ids stands for a
  // sentence with no text (ordo::has_text): one empty hypothesis, score 0, not run, as in
  // translate(). `target_prefix_ids`: per input, the
  // decoder ids after the start token it starts with (taken as they are: a forced language
  // code is not added), or empty.
  std::vector<TranslationResult> translate_ids(const std::vector<std::vector<int64_t>>& source_ids,
                                               const DecodeOptions& options = {}, const BatchOptions& batching = {},
                                               const std::vector<std::vector<int64_t>>& target_prefix_ids = {}) const;

  // The log-probability of each target given its source (one target per source), per token
  // and in total, the final </s> included: Hugging Face's teacher-forced forward pass, batched.
  // For filtering parallel corpora and quality estimation. `options` give the source_lang,
  // target_lang (the forced first token, scored like the others) and task; decoding options
  // do not apply. Unlike translate(), a source with no text is scored as it is.
  std::vector<ScoreResult> score(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
                                 const DecodeOptions& options = {}, const BatchOptions& batching = {}) const;

  // A glossary's terms put in place (ordo/glossary.h) in `results`, the translations of
  // `sentences` made with `options` and return_attention (a hypothesis without attention is
  // left as it is). Without options.return_attention the attention and source pieces are
  // dropped from the results returned. translate() does this for DecodeOptions::glossary; a
  // caller that runs its own batches (ordo serve) calls it on what they return.
  std::vector<TranslationResult> place_terms(const std::vector<std::string>& sentences,
                                             std::vector<TranslationResult> results, const Glossary& glossary,
                                             const DecodeOptions& options = {}) const;

  // The most source tokens the model takes in one pass (config.json's max_position_embeddings;
  // T5's n_positions; LED's max_encoder_position_embeddings), special tokens and a task's prefix
  // included: longer sources are cut.
  int64_t max_source_tokens() const;

  // Source ids exactly as translate() would feed them to the encoder; with `source_lang`, as
  // translate() with DecodeOptions::source_lang does (multilingual models; others ignore it).
  std::vector<int64_t> encode(const std::string& sentence) const;
  std::vector<int64_t> encode(const std::string& sentence, const std::string& source_lang) const;
  // The same as translate() with `options` feeds them: its task's prefix (DecodeOptions::task)
  // and its source_lang applied (translate() runs nothing for a sentence with no text: give
  // translate_ids() no ids for it).
  std::vector<int64_t> encode(const std::string& sentence, const DecodeOptions& options) const;

  // The tasks of the folder's config.json task_specific_params that DecodeOptions::task may
  // name (T5: "summarization", "translation_en_to_de", ...), sorted; empty when it has none.
  std::vector<std::string> tasks() const;

  // The language codes a multilingual model takes as source_lang / target_lang ("de" for
  // M2M100, "deu_Latn" for NLLB); empty for models of one language pair (Marian, Pegasus).
  std::vector<std::string> languages() const;

  // The decoding settings `options` resolve to for this model, each with its source
  // (option, generation_config.json, preset, default): what `ordo --print-config` shows.
  std::vector<ResolvedSetting> resolved_settings(const DecodeOptions& options = {}) const;

  // With DecodeOptions::return_attention, how many weights a hypothesis carries for each pair of
  // a target and a source position (Attention::weights): the decoder's layers x heads. What a
  // caller bounding attention's memory multiplies by target x source lengths.
  int64_t attention_weights_per_pair() const;
  // Folder the model was loaded from.
  const std::string& model_dir() const;

 private:
  struct Impl;
  // impl_, or an ordo::Error when this Translator was moved from.
  const Impl& checked_impl() const;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ordo
