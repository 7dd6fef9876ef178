// ordo-train: trains a Marian-architecture translation (or summarization) model from scratch
// on parallel text, with the engine's own layers, and exports Hugging Face folders.
//
// Resumable: the whole training state (weights, Adam moments, position in the data) is saved
// to <work>/resume.safetensors every few minutes, on SIGINT/SIGTERM, and at the end; the same
// command continues from it. The model with the best validation BLEU is kept in <work>/best.
//
// --init FOLDER starts from a trained Marian folder (its weights, shape and joint vocabulary)
// instead of random weights: continued training on new data, e.g. back-translated pairs;
// with --init-layers N, as a deeper model of N layers per stack (see train/layer_stacking.h).
// --average N keeps the parameters of the last N validations and, at the end, writes their
// mean to <work>/averaged (and to best/ when it validates better): see train/averaging.h.
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>

#include <ATen/Parallel.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "metrics/bleu.h"
#include "metrics/rouge.h"
#include "models/checkpoint.h"
#include "models/family.h"
#include "ordo/ordo.h"
#include "train/adam.h"
#include "train/averaging.h"
#include "train/corpus.h"
#include "train/layer_stacking.h"
#include "train/marian_export.h"
#include "train/spm_train.h"
#include "train/training_forward.h"

namespace {

using namespace ordo;
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct Args {
  std::string train_source, train_target, valid_source, valid_target;
  std::string work = "runs/model";
  std::string source_lang = "en", target_lang = "de";
  int64_t spm_vocab = 8000;
  train::MarianShape shape;
  int64_t batch_tokens = 3000, warmup = 1000, max_epochs = 30, valid_every = 500, max_len = 128;
  double lr = 7e-4, dropout = 0.1, label_smoothing = 0.1, clip = 1.0;
  double max_minutes = 0, save_minutes = 10;
  int64_t valid_lines = 0, valid_max_new_tokens = 96;
  std::string metric = "bleu";
  int threads = 0;
  uint64_t seed = 1;
  std::string init;           // a Marian folder to start from ("" = random weights)
  int64_t init_layers = 0;    // with init: layers per stack of the new model (0 = the init's)
  int64_t average = 0;        // checkpoints kept and averaged at the end (0 = none)
  bool average_only = false;  // average what <work>/checkpoints holds, without training
};

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

std::string hms(double seconds) {
  char buf[32];
  const long s = static_cast<long>(seconds);
  std::snprintf(buf, sizeof(buf), "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

// The training state that a resume restores, besides the tensors.
struct Progress {
  int64_t step = 0, epoch = 0, batch = 0;
  double best = -1, elapsed = 0;
  int64_t tokens = 0;
};

void save_resume(const std::string& path, train::Adam& adam, const Progress& p) {
  std::vector<io::TensorData> tensors;
  auto add = [&](const std::string& name, const at::Tensor& t, io::DType dtype) {
    const at::Tensor c = t.detach().contiguous();
    std::vector<float> v(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
    tensors.push_back(
        {name, dtype, c.sizes().vec(), dtype == io::DType::BF16 ? io::float32_to_bf16_bytes(v) : io::float32_bytes(v)});
  };
  for (train::AdamParam& a : adam.params()) {
    add("param/" + a.name, a.param, io::DType::F32);
    // Adam's moments need range more than precision: bfloat16 halves the checkpoint.
    add("adam_m/" + a.name, a.m, io::DType::BF16);
    add("adam_v/" + a.name, a.v, io::DType::BF16);
  }
  io::write_safetensors(path, tensors,
                        {{"step", std::to_string(p.step)},
                         {"epoch", std::to_string(p.epoch)},
                         {"batch", std::to_string(p.batch)},
                         {"best", std::to_string(p.best)},
                         {"elapsed", std::to_string(p.elapsed)},
                         {"tokens", std::to_string(p.tokens)}});
}

Progress load_resume(const std::string& path, train::Adam& adam) {
  io::SafetensorsFile file(path);
  at::NoGradGuard no_grad;
  for (train::AdamParam& a : adam.params()) {
    const std::vector<int64_t> shape = a.param.sizes().vec();
    auto load = [&](const std::string& name, at::Tensor& target) {
      const std::vector<float> v = io::to_float32(file.get(name, shape));
      target.copy_(at::from_blob(const_cast<float*>(v.data()), shape, at::kFloat));
    };
    load("param/" + a.name, a.param);
    load("adam_m/" + a.name, a.m);
    load("adam_v/" + a.name, a.v);
  }
  const auto& m = file.metadata();
  Progress p;
  p.step = std::stoll(m.at("step"));
  p.epoch = std::stoll(m.at("epoch"));
  p.batch = std::stoll(m.at("batch"));
  p.best = std::stod(m.at("best"));
  p.elapsed = std::stod(m.at("elapsed"));
  p.tokens = std::stoll(m.at("tokens"));
  return p;
}

// --init: checks that `dir` holds a model ordo-train can continue (Marian layout, one joint
// vocabulary, as ordo-train writes them) and takes its shape into `a`.
void take_initial_shape(Args& a) {
  const io::ModelConfig c = io::load_model_config(a.init + "/config.json");
  auto refuse = [&](const std::string& why) {
    throw Error(c.path + ": --init needs a Marian model of ordo-train's layout: " + why);
  };
  if (c.model_type != "marian") refuse("model_type is '" + c.model_type + "'");
  if (c.encoder_layers != c.decoder_layers || c.encoder_attention_heads != c.decoder_attention_heads ||
      c.encoder_ffn_dim != c.decoder_ffn_dim)
    refuse("encoder and decoder differ in layers, heads or ffn_dim");
  if (c.normalize_before || c.normalize_embedding) refuse("pre-norm layers");
  if (!c.share_encoder_decoder_embeddings || c.vocab_size != c.decoder_vocab_size)
    refuse("separate source and target vocabularies");
  std::ifstream source(a.init + "/source.spm", std::ios::binary), target(a.init + "/target.spm", std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(source)), {}), t((std::istreambuf_iterator<char>(target)), {});
  if (s.empty() || s != t) refuse("source.spm and target.spm are missing or not one joint model");
  a.shape.d_model = c.d_model;
  a.shape.layers = c.encoder_layers;
  a.shape.heads = c.encoder_attention_heads;
  a.shape.ffn_dim = c.encoder_ffn_dim;
  a.shape.max_positions = c.max_position_embeddings;
  a.shape.activation = c.activation_function;
}

// --init: the folder's SentencePiece model becomes <work>/spm.model, and its vocab.json (the
// pieces in id order, <pad> last) <work>/spm.vocab, so that training goes on in its ids.
void take_initial_vocabulary(const std::string& init, const std::string& spm_prefix) {
  const std::string vocab_path = init + "/vocab.json";
  std::ifstream in(vocab_path);
  if (!in) throw Error(vocab_path + ": cannot open");
  nlohmann::json vocab;
  try {
    vocab = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(vocab_path + ": not valid JSON (" + e.what() + ")");
  }
  std::vector<std::string> pieces(vocab.size());
  for (const auto& [piece, id] : vocab.items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<size_t>() >= pieces.size() ||
        !pieces[id.get<size_t>()].empty())
      throw Error(vocab_path + ": piece '" + piece + "' has an id that is not unique in 0.." +
                  std::to_string(pieces.size() - 1));
    pieces[id.get<size_t>()] = piece;
  }
  if (pieces.empty() || pieces.back() != "<pad>")
    throw Error(vocab_path + ": <pad> must be the last id (ordo-train's layout)");
  std::ofstream out(spm_prefix + ".vocab");
  for (size_t i = 0; i + 1 < pieces.size(); ++i) out << pieces[i] << "\t0\n";
  if (!out) throw Error(spm_prefix + ".vocab: cannot write");
  train::copy_file(init + "/source.spm", spm_prefix + ".model");
}

int run(Args a) {
  if (a.threads > 0) at::set_num_threads(a.threads);
  int64_t trained_layers = 0;  // the --init model's layers per stack
  if (!a.init.empty()) {
    take_initial_shape(a);
    trained_layers = a.shape.layers;
    if (a.init_layers > 0) {  // refused here, before any work, when it cannot grow
      train::check_growth(a.init + "/config.json", trained_layers, a.init_layers);
      a.shape.layers = a.init_layers;
    }
  }
  ::mkdir(a.work.c_str(), 0755);
  const std::string current = a.work + "/current", best = a.work + "/best";
  ::mkdir(current.c_str(), 0755);
  ::mkdir(best.c_str(), 0755);

  // 1. Joint SentencePiece model (trained once, on both sides of the training data).
  const std::string spm_prefix = a.work + "/spm";
  if (!exists(spm_prefix + ".model") && !a.init.empty()) take_initial_vocabulary(a.init, spm_prefix);
  if (!exists(spm_prefix + ".model")) {
    const std::string joined = a.work + "/spm_input.txt";
    {
      std::ofstream out(joined);
      for (const std::string& f : {a.train_source, a.train_target})
        for (const std::string& line : train::read_text_column(f)) out << line << "\n";
    }
    std::cerr << "training SentencePiece (" << a.spm_vocab << " pieces) on " << joined << "\n";
    train::run_spm_train({"--input=" + joined, "--model_prefix=" + spm_prefix,
                          "--vocab_size=" + std::to_string(a.spm_vocab), "--model_type=unigram",
                          "--character_coverage=1.0", "--eos_id=0", "--unk_id=1", "--bos_id=-1", "--pad_id=-1",
                          "--input_sentence_size=200000", "--shuffle_input_sentence=true", "--minloglevel=2"});
    std::remove(joined.c_str());
  }
  int64_t vocab_size = 0;
  for (const std::string& dir : {current, best})
    vocab_size =
        train::write_tokenizer_files(dir, spm_prefix + ".model", spm_prefix + ".vocab", a.source_lang, a.target_lang);
  const auto tokenizer = text::load_marian_tokenizer(current, false);

  // 2. Data.
  int64_t skipped = 0;
  const std::vector<train::Example> examples =
      train::load_parallel(a.train_source, a.train_target, *tokenizer, a.max_len, &skipped);
  train::MarianVocab vocab;
  vocab.pad = vocab_size - 1;
  vocab.size = vocab_size;
  const train::Batcher batcher(examples, a.batch_tokens, vocab);
  const auto valid_sources = train::read_text_column(a.valid_source, a.valid_lines);
  const auto valid_refs = train::read_text_column(a.valid_target, a.valid_lines);
  int64_t valid_skipped = 0;
  const std::vector<train::Example> valid_examples =
      // The loss needs pairs that fit the positions (the metric's translator truncates).
      train::load_parallel(a.valid_source, a.valid_target, *tokenizer, a.shape.max_positions, &valid_skipped);
  const train::Batcher valid_batcher(valid_examples, a.batch_tokens, vocab);
  std::cerr << examples.size() << " training pairs (" << skipped << " longer than " << a.max_len << " tokens skipped), "
            << valid_sources.size() << " validation (" << valid_skipped << " longer than " << a.shape.max_positions
            << " positions left out of the validation loss)\n";

  // 3. Model and optimizer.
  models::Seq2SeqModel model(train::marian_config(a.shape, vocab_size), models::marian_family());
  train::initialise(model, a.seed);
  const std::string resume = a.work + "/resume.safetensors";
  if (!a.init.empty() && !exists(resume)) {
    std::unique_ptr<models::Checkpoint> initial = models::open_checkpoint(a.init);
    if (a.shape.layers != trained_layers)
      initial = train::stacked_checkpoint(std::move(initial), trained_layers, a.shape.layers);
    model.load_weights(*initial);
    std::cerr << "initialised from " << a.init;
    if (a.shape.layers != trained_layers)
      std::cerr << " (its " << trained_layers << " layers grown into " << a.shape.layers
                << ": layer i from its layer i * " << trained_layers << " / " << a.shape.layers << ")";
    std::cerr << "\n";
  }
  train::Adam adam(a.lr, a.warmup);
  int64_t parameters = 0;
  model.visit([&](const std::string& name, at::Tensor& p) {
    if (name == "final_logits_bias") return;  // a buffer in Marian, never trained
    p.requires_grad_(true);
    adam.add(name, p);
    parameters += p.numel();
  });
  Progress progress;
  if (exists(resume)) {
    progress = load_resume(resume, adam);
    std::cerr << "resumed from " << resume << " at step " << progress.step << " (epoch " << progress.epoch + 1
              << ", batch " << progress.batch << "), best validation " << a.metric << " " << progress.best << "\n";
  }
  std::cerr << "model: d_model " << a.shape.d_model << ", " << a.shape.layers << "+" << a.shape.layers << " layers, "
            << parameters / 1e6 << "M parameters, vocabulary " << vocab_size << "\n";

  const train::TrainingOptions options{a.dropout, a.label_smoothing};
  std::ofstream log(a.work + "/log.tsv", std::ios::app);

  // Validation loss and greedy metric of the model as it is now (its weights in `current`).
  struct Score {
    double loss = 0, metric = 0;
  };
  auto score = [&]() {
    at::NoGradGuard no_grad;
    double loss = 0;
    int64_t tokens = 0;
    for (const auto& members : valid_batcher.epoch_order(0, 0)) {
      const train::Batch b = valid_batcher.make(members);
      loss += train::batch_loss(model, b, options, false).item<double>();
      tokens += b.target_tokens;
    }
    train::write_model_files(current, model, a.shape, io::DType::F32, a.dropout);
    const Translator translator(current);
    DecodeOptions decode;
    decode.beam_size = 1;
    decode.max_new_tokens = static_cast<int>(a.valid_max_new_tokens);
    BatchOptions batching;
    batching.batch_size = 64;
    std::vector<std::string> hyps;
    for (const TranslationResult& r : translator.translate(valid_sources, decode, batching))
      hyps.push_back(r.hypotheses[0].text);
    Score s;
    s.loss = loss / tokens;
    s.metric = a.metric == "rougeL" ? metrics::corpus_rouge(hyps, {valid_refs}).rougeL.fmeasure
                                    : metrics::corpus_bleu(hyps, {valid_refs}).score;
    return s;
  };
  const std::string checkpoints = a.work + "/checkpoints";
  auto validate = [&]() {
    const Score s = score();
    const bool improved = s.metric > progress.best;
    if (improved) {
      progress.best = s.metric;
      train::write_model_files(best, model, a.shape, io::DType::F16, a.dropout);
    }
    if (a.average > 0) {
      ::mkdir(checkpoints.c_str(), 0755);
      train::save_checkpoint(checkpoints, progress.step, model, a.average);
    }
    char line[256];
    std::snprintf(line, sizeof(line), "valid step %ld | loss %.3f | ppl %.2f | greedy %s %.2f%s", progress.step, s.loss,
                  std::exp(s.loss), a.metric.c_str(), s.metric, improved ? " | best" : "");
    std::cerr << line << "\n";
    log << "valid\t" << progress.step << "\t" << progress.epoch << "\t" << s.loss << "\t" << s.metric << "\n";
    log.flush();
  };
  // The mean of the kept checkpoints, validated like the others; it replaces best/ only if it
  // validates better (selection on the validation set, never on a test set).
  auto average = [&]() {
    const std::vector<std::string> files = train::list_checkpoints(checkpoints);
    if (files.size() < 2) {
      std::cerr << "averaging: " << files.size() << " checkpoint(s) in " << checkpoints << ", nothing to average\n";
      return;
    }
    train::average_checkpoints(files, model);
    const Score s = score();
    const std::string averaged = a.work + "/averaged";
    ::mkdir(averaged.c_str(), 0755);
    train::write_tokenizer_files(averaged, spm_prefix + ".model", spm_prefix + ".vocab", a.source_lang, a.target_lang);
    train::write_model_files(averaged, model, a.shape, io::DType::F16, a.dropout);
    const bool improved = s.metric > progress.best;
    char line[512];
    std::snprintf(line, sizeof(line),
                  "averaged %zu checkpoints (%s .. %s) | loss %.3f | greedy %s %.2f (best single %.2f)%s -> %s",
                  files.size(), files.front().c_str(), files.back().c_str(), s.loss, a.metric.c_str(), s.metric,
                  progress.best, improved ? " | best" : "", averaged.c_str());
    std::cerr << line << "\n";
    log << "averaged\t" << progress.step << "\t" << files.size() << "\t" << s.loss << "\t" << s.metric << "\n";
    log.flush();
    if (improved) {
      progress.best = s.metric;
      train::write_model_files(best, model, a.shape, io::DType::F16, a.dropout);
    }
  };
  if (a.average_only) {
    average();
    return 0;
  }

  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  const auto start = Clock::now();
  auto last_save = start, last_log = start;
  const double elapsed_before = progress.elapsed;
  int64_t tokens_since_log = 0;
  double loss_since_log = 0;
  int64_t target_tokens_since_log = 0;
  auto elapsed = [&] { return elapsed_before + std::chrono::duration<double>(Clock::now() - start).count(); };
  bool stop = false;

  for (; progress.epoch < a.max_epochs && !stop; ++progress.epoch, progress.batch = 0) {
    const auto order = batcher.epoch_order(a.seed, progress.epoch);
    for (; progress.batch < static_cast<int64_t>(order.size()); ++progress.batch) {
      const train::Batch b = batcher.make(order[progress.batch]);
      const at::Tensor loss = train::batch_loss(model, b, options, true);
      (loss / static_cast<double>(b.target_tokens)).backward();
      adam.clip_gradients(a.clip);
      adam.step(++progress.step);
      loss_since_log += loss.item<double>();
      target_tokens_since_log += b.target_tokens;
      tokens_since_log += b.target_tokens + b.source_tokens;
      progress.tokens += b.target_tokens + b.source_tokens;

      const auto now = Clock::now();
      const double since_log = std::chrono::duration<double>(now - last_log).count();
      if (since_log >= 30) {
        const double done = (progress.epoch + static_cast<double>(progress.batch + 1) / order.size()) / a.max_epochs;
        const double rate = tokens_since_log / since_log;
        char line[256];
        std::snprintf(line, sizeof(line),
                      "step %ld | epoch %ld %3.0f%% | loss %.3f | lr %.2e | %.0f tok/s | elapsed %s | ETA %s",
                      progress.step, progress.epoch + 1, 100.0 * (progress.batch + 1) / order.size(),
                      loss_since_log / target_tokens_since_log, adam.learning_rate(progress.step), rate,
                      hms(elapsed()).c_str(), hms(elapsed() / std::max(done, 1e-9) * (1 - done)).c_str());
        std::cerr << line << "\n";
        last_log = now;
        tokens_since_log = target_tokens_since_log = 0;
        loss_since_log = 0;
      }
      if (progress.step % a.valid_every == 0) validate();
      const bool out_of_time = a.max_minutes > 0 && elapsed() - elapsed_before >= a.max_minutes * 60;
      if (g_stop || out_of_time || std::chrono::duration<double>(now - last_save).count() >= a.save_minutes * 60) {
        ++progress.batch;  // this batch is done
        progress.elapsed = elapsed();
        save_resume(resume, adam, progress);
        --progress.batch;
        last_save = now;
        if (g_stop || out_of_time) {
          std::cerr << "stopped at step " << progress.step << "; state saved to " << resume
                    << " (run the same command to continue)\n";
          stop = true;
          break;
        }
      }
    }
  }
  if (!stop) {
    validate();
    progress.elapsed = elapsed();
    save_resume(resume, adam, progress);
    if (a.average > 0) average();
    std::cerr << "finished " << a.max_epochs << " epochs; best validation " << a.metric << " " << progress.best
              << "; best model in " << best << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ordo-train: train a Marian-architecture model from scratch (resumable)"};
  Args a;
  app.add_option("--train-source", a.train_source,
                 "Training source text, one segment per line, or FILE.jsonl#FIELD for a JSON-lines field")
      ->required();
  app.add_option("--train-target", a.train_target, "Training target text, aligned")->required();
  app.add_option("--valid-source", a.valid_source, "Validation source")->required();
  app.add_option("--valid-target", a.valid_target, "Validation target (reference)")->required();
  app.add_option("--work", a.work, "Working folder: spm, resume checkpoint, current/ and best/ model folders");
  app.add_option("--source-lang", a.source_lang);
  app.add_option("--target-lang", a.target_lang);
  app.add_option("--spm-vocab", a.spm_vocab, "SentencePiece pieces (joint vocabulary)");
  app.add_option("--d-model", a.shape.d_model);
  app.add_option("--layers", a.shape.layers, "Encoder and decoder layers (each)");
  app.add_option("--heads", a.shape.heads);
  app.add_option("--ffn-dim", a.shape.ffn_dim);
  app.add_option("--max-positions", a.shape.max_positions);
  app.add_option("--activation", a.shape.activation);
  app.add_option("--batch-tokens", a.batch_tokens, "Max padded tokens per batch (longer side)");
  app.add_option("--lr", a.lr, "Peak learning rate");
  app.add_option("--warmup", a.warmup, "Warm-up steps");
  app.add_option("--dropout", a.dropout);
  app.add_option("--label-smoothing", a.label_smoothing);
  app.add_option("--clip", a.clip, "Gradient norm clip");
  app.add_option("--max-epochs", a.max_epochs);
  app.add_option("--max-len", a.max_len, "Skip training pairs longer than this many tokens");
  app.add_option("--valid-every", a.valid_every, "Validate (loss + greedy metric) every N steps");
  app.add_option("--valid-lines", a.valid_lines, "Use the first N validation lines for the metric (0 = all)");
  app.add_option("--valid-max-new-tokens", a.valid_max_new_tokens);
  app.add_option("--metric", a.metric, "Model selection metric: bleu or rougeL")
      ->check(CLI::IsMember({"bleu", "rougeL"}));
  app.add_option("--max-minutes", a.max_minutes, "Stop (saving the resume state) after this much training time");
  app.add_option("--save-minutes", a.save_minutes, "Save the resume state this often");
  app.add_option("--threads", a.threads);
  app.add_option("--seed", a.seed);
  CLI::Option* init =
      app.add_option("--init", a.init,
                     "Start from this Marian folder's weights, shape and joint vocabulary (made by ordo-train) "
                     "instead of random weights; ignored when resuming")
          ->check(CLI::ExistingDirectory);
  app.add_option("--init-layers", a.init_layers,
                 "With --init: a deeper model of this many layers per stack, layer i starting from the "
                 "--init model's layer i * L / N (see train/layer_stacking.h)")
      ->check(CLI::Range(int64_t{1}, int64_t{64}))
      ->needs(init);
  app.add_option("--average", a.average,
                 "Keep the parameters of the last N validations in <work>/checkpoints and, at the end, "
                 "write their mean to <work>/averaged (and best/ if it validates better)")
      ->check(CLI::Range(int64_t{0}, int64_t{1000}));
  app.add_flag("--average-only", a.average_only, "Only average the checkpoints <work>/checkpoints holds (no training)");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::cerr << "ordo-train: error: " << e.what() << "\n";
    return 1;
  }
}
