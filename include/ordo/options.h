// ordo — public options and result types. Plain structs, no LibTorch types.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ordo/error.h"

namespace ordo {

// The arithmetic of the matrix multiplications (the weights are packed for it at load).
enum class ComputeType {
  kFloat32,   // the default: the reference's results (token-identical to Hugging Face)
  kBFloat16,  // bfloat16 weights and activations, float32 accumulation: faster GEMMs
  kInt8,      // int8 weights (per output channel) and activations (per row, dynamic)
};

// Names <-> ComputeType ("float32", ...). parse throws ordo::Error listing the names.
ORDO_API ComputeType parse_compute_type(const std::string& name);
ORDO_API const char* compute_type_name(ComputeType type);
ORDO_API std::vector<std::string> compute_type_names();

// How a model is loaded and run. Fixed for the lifetime of a Translator.
struct ModelOptions {
  // Intra-op threads of one call (0 = as many as the calling thread has: OpenMP's default, all
  // cores). Set for the call and the loading only; the calling thread's own count is restored.
  int threads = 0;
  // Batches translated at once, each on threads / inter_threads intra-op threads, by workers
  // that live as long as the Translator. Two one-thread workers use 2 cores better than one
  // two-thread call (more work per thread between synchronisations); the weights are shared.
  // At most kMaxInterThreads; ordo::Error when the system cannot start them.
  int inter_threads = 1;
  static constexpr int kMaxInterThreads = 256;
  ComputeType compute_type = ComputeType::kFloat32;
  // Packed weights cache (start-up of big models): the first load of a model for a compute
  // type keeps its packed weights in a file, and later loads read and check that file instead
  // of packing again (a damaged file is never used: it is packed afresh, with a warning to
  // on_warning). Keyed by the checkpoint's content; only for checkpoints of 64 MB or more
  // (ORDO_WEIGHT_CACHE=always: any size). Off with false here, `--no-weight-cache` on the
  // command line or ORDO_WEIGHT_CACHE=0 in the environment. The file is written by a thread
  // of its own once the model is loaded (translations start meanwhile); it appears complete
  // or not at all, and destroying the Translator, or the process's exit(), waits for it.
  bool weight_cache = true;
  // Where: "" = $ORDO_CACHE_DIR, else $XDG_CACHE_HOME/ordo, else $HOME/.cache/ordo.
  std::string weight_cache_dir;
  // What the library has to say that is not an error (a weights cache file that could not be
  // used or written, ...): handed to this callback, from the thread that loads the model (a
  // cache file that could not be written: from the thread writing it, until the Translator is
  // destroyed). The
  // library never writes to stderr itself; unset, warnings are dropped. The command line and
  // `ordo serve` print them as "ordo: warning: ...".
  std::function<void(const std::string& warning)> on_warning;
};

// How the inputs of one call are cut into batches: how to run, not what to decode (the
// results do not depend on it; CTranslate2 keeps max_batch_size apart likewise). Inputs are
// sorted by length first, so that sentences of a like length share a batch.
struct BatchOptions {
  int batch_size = 32;  // sentences encoded and decoded together (>= 1)
  // When > 0, a batch also holds at most this many source tokens (rows x longest source,
  // padding included): long sentences go in smaller batches.
  int batch_tokens = 0;
};

// One event of a streamed translation (DecodeOptions::on_token).
struct TokenEvent {
  size_t input = 0;   // which input of the call: its index in the sentences given
  int64_t id = -1;    // the token just generated (target prefix tokens and the final </s> too); -1 when done
  std::string piece;  // its piece ("▁Haus", "</s>"); "" when done
  // Its log-probability as the search scored it (log-softmax of the processed logits; the
  // hypothesis' greedy score is their sum); 0 for a target prefix token and when done.
  float log_prob = 0.0f;
  // The output text so far that later tokens cannot change: the words before the last space
  // (the word being written may still grow; Hugging Face's clean-up may join " ." or " n't"),
  // never half a UTF-8 character. Each event's text extends the one before it.
  std::string text;
  std::string delta;  // what `text` gained with this event (often ""); an input's deltas concatenate to its final text
  bool done = false;  // the last event of the input: `text` is its result's best Hypothesis::text
};

class Glossary;

// Decoding settings. An unset field takes the model's generation_config.json value, and
// failing that Hugging Face's default; a set field overrides both.
struct DecodeOptions {
  std::optional<int> beam_size;             // num_beams; 1 = greedy
  std::optional<int> n_best;                // num_return_sequences (<= beam_size)
  std::optional<int> max_new_tokens;        // at most this many generated tokens
  std::optional<int> max_length;            // HF max_length: total target length incl. start token
  std::optional<int> min_length;            // HF min_length: total target length incl. start token
  std::optional<int> min_new_tokens;        // at least this many generated tokens before EOS
  std::optional<float> length_penalty;      // beam score = logprob_sum / length^length_penalty
  std::optional<bool> early_stopping;       // HF semantics: stop a beam group once n_best are done
  std::optional<int> no_repeat_ngram_size;  // forbid repeating any n-gram of this size
  std::optional<float> repetition_penalty;  // CTRL-style penalty on already generated tokens
  std::optional<std::vector<std::vector<int64_t>>> bad_words_ids;  // never generated sequences
  // Target phrases every output must contain (lexical constraints): transformers' constrained
  // beam search (generate(force_words_ids=...), token-identical). Phrases separated by "|"
  // ("contract|Bahnhof"), each encoded as target text without special tokens. Needs beam search
  // (beam_size >= 2). When too few hypotheses hold them all at the length limit, the best others
  // fill the n-best (their score may be -inf), as in transformers.
  std::optional<std::string> force_words;
  // A glossary (ordo/glossary.h): in each sentence holding a source term, the target term takes
  // the place of the model's own translation of it; the rest of that translation, and sentences
  // without a term, stay as without the glossary. Hypothesis::score stays the score of the
  // model's own translation. With on_token, a sentence holding a term streams no tokens, only
  // its done event (with the final text). Not a table option: `ordo translate --glossary
  // FILE.tsv`, the "glossary" object of ordo serve's /v1/translate.
  std::shared_ptr<const Glossary> glossary;

  // Multilingual models (M2M100, NLLB): language codes as the model names them ("de" or
  // "__de__" for M2M100, "deu_Latn" for NLLB). The source language defaults to the folder's
  // tokenizer_config.json src_lang; the target language is forced as the first token.
  std::optional<std::string> source_lang;
  std::optional<std::string> target_lang;
  std::optional<int64_t> forced_bos_token_id;  // explicit id; target_lang sets it by name

  // A task of the folder's config.json task_specific_params (T5: "summarization",
  // "translation_en_to_de"): its prefix goes before each input and its settings lie between
  // these options and generation_config.json, as in the transformers pipeline of that task.
  // A task the folder lacks is an error listing its tasks (Translator::tasks()).
  std::optional<std::string> task;

  // LED (Longformer attention): the source positions with global attention, which every
  // position attends to and which attend to every position: "first" (the default: the first
  // token, as transformers' LED summarization examples set global_attention_mask), "none", or
  // 0-based source token positions and ranges, special tokens counted ("0,4-7"; a position past
  // an input's end is none of its). An error for other families.
  std::optional<std::string> global_attention;

  // A target text every translation of the call starts with (Hugging Face generate() with
  // decoder_input_ids = [start] + its target-side ids; CTranslate2's target_prefix): decoding
  // continues after it, and the output keeps it (ids, tokens, text). Encoded as target text
  // without </s>, after the forced first token (M2M100/NLLB/mBART: the target language). The
  // score counts the generated tokens only; max_new_tokens counts after it, max_length with
  // it. Per-input prefixes: the `target_prefixes` argument of Translator::translate.
  std::optional<std::string> target_prefix;
  // Alternatives at the cursor (CTranslate2's return_alternatives): the n_best most likely next
  // tokens after the target prefix (or at the start), </s> and pad left out, each continued
  // greedily to a full translation; ordered by that next token's log-probability, each a
  // Hypothesis that starts with the prefix (n_best counts them; the beam size is 1).
  // Its score: the log-probabilities of the tokens after the prefix (the alternative's included).
  std::optional<bool> return_alternatives;
  // A vocabulary shortlist (CTranslate2's use_vmap): each batch's output projection computes
  // only the target tokens the model folder's vmap.txt maps the batch's source pieces to ("src
  // pieces TAB target pieces" per line, CTranslate2's format; an empty source = always), plus
  // the special tokens; every other token gets probability 0 (scores are normalized over the
  // shortlist). Faster at large vocabularies, not exact; off by default. `ordo-vmap` (tools/)
  // builds a vmap.txt from a parallel corpus.
  std::optional<bool> use_vmap;

  // Sampling instead of search (HF do_sample): temperature, then top-k, then top-p filtering.
  // The same seed gives the same output.
  std::optional<bool> sample;
  std::optional<float> temperature;
  std::optional<int> top_k;
  std::optional<float> top_p;
  std::optional<uint64_t> seed;
  // Give each hypothesis its cross-attention weights (Hypothesis::attention) and each result
  // its source pieces. Off: nothing is computed or kept for them.
  bool return_attention = false;
  // Give each hypothesis its score and each streamed token its log-probability (on by default).
  // Off (CTranslate2's default), they are 0, and greedy search skips what only they need: in
  // float32, each step's output projection is computed exactly only for the tokens that can be
  // the step's choice (an int8 copy of it, made at the first such step, bounds the others with
  // a proven error bound), so the same tokens come out sooner.
  bool return_scores = true;

  // Asked before each batch is encoded and before each decoding step, from the decoding
  // threads: once it returns true the call stops and throws ordo::Error("cancelled"). Lets a
  // caller (a server whose client gave up or timed out) drop work nobody waits for.
  std::function<bool()> cancelled;

  // Streaming: called with each token greedy search or sampling (n_best 1) generates for an
  // input, in order, and a last time with done = true when the input is finished (an input
  // with no text, not run, gets no event). Returning false stops that input's decoding there:
  // its result ends with the tokens so far, without </s>; the other inputs go on. Beam search
  // and several samples per input have no final token before they end: on_token is then
  // called once per input, done = true. Called from the decoding threads (several at once
  // with ModelOptions::inter_threads > 1); it should return quickly.
  std::function<bool(const TokenEvent& event)> on_token;

  // Defaults below the model's generation_config.json, e.g. a task preset from configs/
  // (see ordo/preset.h). Precedence: these options > generation_config.json > preset >
  // Hugging Face's defaults.
  std::shared_ptr<const DecodeOptions> preset;
};

// The cross-attention of one hypothesis: how much each generated token's query looked at each
// source position, in every decoder layer and head (Hugging Face's `cross_attentions`).
struct Attention {
  int64_t layers = 0, heads = 0;
  int64_t target_length = 0;   // = ids.size(): row t is the query that predicted ids[t]
  int64_t source_length = 0;   // the encoder input ids, special tokens (final </s>) included
  std::vector<float> weights;  // [layer][head][target][source]; each row sums to 1
  // The matrix alignments use, [target][source]: the mean over all heads of layer
  // `alignment_layer`, the penultimate decoder layer (the last when there is one). Without
  // alignment training (opus-mt has none) the penultimate layer's heads follow word
  // correspondences best (Garg et al. 2019, "Jointly Learning to Align and Translate with
  // Transformer Models"); the last layer attends more to what is predicted next.
  int64_t alignment_layer = 0;
  std::vector<float> averaged;

  bool empty() const { return weights.empty(); }
  float at(int64_t layer, int64_t head, int64_t target, int64_t source) const {
    return weights[static_cast<size_t>(((layer * heads + head) * target_length + target) * source_length + source)];
  }
  float aligned(int64_t target, int64_t source) const {
    return averaged[static_cast<size_t>(target * source_length + source)];
  }
};

// One output hypothesis.
struct Hypothesis {
  std::string text;                 // detokenized, special tokens removed
  std::vector<std::string> tokens;  // target pieces, special tokens removed
  std::vector<int64_t> ids;         // generated ids, without the decoder start token, with EOS if any
  float score = 0.0f;               // greedy: sum of log-probs; beam: HF sequences_scores
  Attention attention;              // with DecodeOptions::return_attention
  // With return_attention: the piece of each id in `ids` (special tokens included, e.g. "</s>"),
  // to label attention rows, and the position in `ids` of each entry of `tokens`.
  std::vector<std::string> id_pieces;
  std::vector<int64_t> token_positions;
};

// All hypotheses for one input, best first (n_best of them).
struct TranslationResult {
  std::vector<Hypothesis> hypotheses;
  // With return_attention: the encoder input as pieces, one per source position (special
  // tokens such as a language code or the final "</s>" included), their ids, and the
  // positions that are pieces of the text (the others are special tokens).
  std::vector<std::string> source_tokens;
  std::vector<int64_t> source_ids;
  std::vector<int64_t> source_text_positions;
  // Source tokens cut off because the input was longer than the model accepts
  // (max_position_embeddings); the end-of-sequence token is kept, as HF's truncation does.
  int64_t truncated_tokens = 0;
};

// The log-probability of a given target under the model (Translator::score): Hugging Face's
// forward pass with teacher forcing, log_softmax of the raw logits at each target position.
struct ScoreResult {
  std::vector<int64_t> ids;         // the target as decoder labels: [forced first token,] pieces, </s>
  std::vector<std::string> tokens;  // the piece of each id, special tokens included ("__de__", "</s>")
  std::vector<float> log_probs;     // log P(ids[t] | source, ids[0..t-1]), one per id
  float score = 0.0f;               // their sum
};

}  // namespace ordo
