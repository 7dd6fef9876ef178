// ordo._ordo — the Python face of the public library (include/ordo/ only), by pybind11.
// ordo/__init__.py wraps it: it chooses OpenMP's wait policy before this module loads
// libordo, and adds what is easier in Python (generate_tokens()'s iterator).
//
// Keyword options are read from the one table of decoding options
// (ordo/option_table.h): a name the table has sets that DecodeOptions member, None
// leaves it unset (the model's generation_config.json decides, as on the command line).
// Beside the table only what is not a decoding option: batch_size / batch_tokens
// (BatchOptions), preset, return_attention, glossary, and per-input target prefixes.
//
// ordo.Whisper is faster-whisper's WhisperModel over ordo::SpeechRecognizer: transcribe()
// answers (segments, info) with its defaults (beam size 5, temperature fallback and
// thresholds), audio is a path, bytes, a binary file object or 16 kHz float32 samples.
//
// The GIL is released while ordo computes, so Python threads sharing one Translator run in
// parallel. A call from Python's main thread runs on a helper thread while the main thread
// waits for it and for signals: Ctrl-C sets DecodeOptions::cancelled, which stops the call
// before its next decoding step, and KeyboardInterrupt is raised.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ordo/model_location.h"
#include "ordo/option_table.h"
#include "ordo/ordo.h"

namespace py = pybind11;
using namespace ordo;

namespace {

// ---------------------------------------------------------------- running a call

// Set when the Python caller gave up (Ctrl-C, a generator closed): DecodeOptions::cancelled.
struct CancelFlag {
  std::atomic<bool> stop{false};
};

bool on_main_thread() {
  static const unsigned long main_thread =
      py::module_::import("threading").attr("main_thread")().attr("ident").cast<unsigned long>();
  return PyThread_get_thread_ident() == main_thread;
}

// Runs `work` without the GIL. On the main thread it runs on a helper thread and this one
// checks for signals every 20 ms; a signal whose handler raises (KeyboardInterrupt) cancels
// the call, and that exception is raised once the call has stopped.
template <class Result, class Work>
Result run_released(const std::shared_ptr<CancelFlag>& flag, Work work) {
  if (!on_main_thread()) {
    py::gil_scoped_release release;
    return work();
  }
  std::packaged_task<Result()> task(std::move(work));
  std::future<Result> done = task.get_future();
  std::optional<py::error_already_set> interrupted;
  {
    py::gil_scoped_release release;
    std::thread runner(std::move(task));
    while (done.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
      if (interrupted) continue;
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) {
        interrupted.emplace();  // takes the pending exception (KeyboardInterrupt)
        flag->stop = true;
      }
    }
    runner.join();
  }
  if (interrupted) {
    try {
      done.get();
    } catch (const Error&) {  // "cancelled"
    }
    throw std::move(*interrupted);
  }
  return done.get();
}

// ---------------------------------------------------------------- arguments, checked

// Every argument a caller gives goes through one of these, named as the caller named it: a
// wrong type raises TypeError ("threads must be an int, not str"), a value outside the accepted
// range ordo.Error ("threads must be an integer from 0 to 1024"). pybind11's own conversions
// would answer "Unable to cast Python instance to C++ type", or list the signature without
// saying which argument was wrong.

[[noreturn]] void type_error(const std::string& message) { throw py::type_error(message); }

std::string type_name(const py::handle& value) { return py::str(value.get_type().attr("__name__")); }

bool bool_arg(const py::handle& value, const std::string& name) {
  if (!py::isinstance<py::bool_>(value)) type_error(name + " must be True or False, not " + type_name(value));
  return value.ptr() == Py_True;
}

// A str as UTF-8; one that has none (a lone surrogate) raises Python's UnicodeEncodeError.
std::string utf8_of(const py::handle& text) {
  Py_ssize_t size = 0;
  const char* bytes = PyUnicode_AsUTF8AndSize(text.ptr(), &size);
  if (!bytes) throw py::error_already_set();
  return std::string(bytes, static_cast<size_t>(size));
}

std::string str_arg(const py::handle& value, const std::string& name) {
  if (!py::isinstance<py::str>(value)) type_error(name + " must be a str, not " + type_name(value));
  return utf8_of(value);
}

// A path: a str, or an os.PathLike whose path is a str.
std::string path_arg(const py::handle& value, const std::string& name) {
  if (py::isinstance<py::str>(value)) return utf8_of(value);
  if (py::hasattr(value, "__fspath__")) {
    const py::object path = py::module_::import("os").attr("fspath")(value);
    if (py::isinstance<py::str>(path)) return utf8_of(path);
  }
  type_error(name + " must be a str or a path, not " + type_name(value));
}

// A list (or another iterable) of str; not a str itself, nor a dict.
std::vector<std::string> strings_arg(const py::handle& value, const std::string& name) {
  if (py::isinstance<py::str>(value)) type_error(name + " must be a list of str, not a str");
  if (py::isinstance<py::bytes>(value) || py::isinstance<py::dict>(value) || !py::isinstance<py::iterable>(value))
    type_error(name + " must be a list of str, not " + type_name(value));
  std::vector<std::string> out;
  for (const py::handle& item : py::iter(value)) {
    if (!py::isinstance<py::str>(item))
      type_error(name + " must hold str only, not " + type_name(item) + " (item " + std::to_string(out.size()) + ")");
    out.push_back(utf8_of(item));
  }
  return out;
}

// ---------------------------------------------------------------- options

std::string known_options() {
  std::string known;
  for (const DecodeOptionSpec& spec : decode_option_specs())
    known += std::string(known.empty() ? "" : ", ") + spec.name;
  for (const BatchOptionSpec& spec : batch_option_specs()) known += std::string(", ") + spec.name;
  return known + ", return_attention, return_scores, glossary, preset, long_input, chunk_tokens";
}

// A Python value as the tables take it: bool, int (one beyond int64 as an infinite double: out
// of every range), float, str; anything else a value no option takes.
OptionValue option_value(const py::handle& value) {
  if (py::isinstance<py::bool_>(value)) return value.ptr() == Py_True;
  if (py::isinstance<py::int_>(value)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
    if (!overflow) return static_cast<int64_t>(v);
    return overflow > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
  }
  if (py::isinstance<py::float_>(value)) return PyFloat_AsDouble(value.ptr());
  if (py::isinstance<py::str>(value)) return utf8_of(value);
  return {};
}

// An OptionValue as the Python value it stands for (None when unset).
py::object python_value(const OptionValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>)
          return py::none();
        else
          return py::cast(v);
      },
      value.value);
}

// Sets `spec`'s option in `options` from a Python value, through the table: a value of the
// wrong type raises TypeError ("beam_size must be an integer, not str"), one out of range
// ordo.Error ("beam_size must be an integer from 1 to 1024").
template <class Options, class Spec>
void set_option(Options& options, const Spec& spec, const py::handle& value) {
  try {
    spec.set(options, option_value(value));
  } catch (const OptionError& e) {
    if (e.wrong_type) type_error(e.option + " must be " + e.type + ", not " + type_name(value));
    throw;
  }
}

std::shared_ptr<const Glossary> glossary_of(const py::handle& value) {
  Glossary glossary;
  if (py::isinstance<py::str>(value) || py::hasattr(value, "__fspath__")) {
    glossary = Glossary::read_tsv(path_arg(value, "glossary"));
  } else if (py::isinstance<py::dict>(value)) {
    for (const auto& [source, target] : value.cast<py::dict>()) {
      const std::string term = str_arg(source, "glossary's source terms");
      glossary.add(term, str_arg(target, "glossary's target terms"), "glossary");
    }
  } else {
    type_error("glossary must be a path to a TSV file (source term TAB target term) or a dict {source: target}");
  }
  return std::make_shared<const Glossary>(std::move(glossary));
}

// One call's settings, from its keyword arguments.
struct Call {
  DecodeOptions decode;
  BatchOptions batching;
  std::vector<std::string> target_prefixes;  // per input (target_prefix=[...]); empty = none
  std::shared_ptr<CancelFlag> flag = std::make_shared<CancelFlag>();
  // summarize / summarize_batch: long_input=, chunk_tokens= (ordo/document.h); `long_input_given`
  // names the keyword another method was given.
  LongInputOptions long_input;
  std::string long_input_given;
};

// `default_preset`: "translation" or "summarization", as `ordo translate` / `ordo summarize`.
Call call_of(const py::kwargs& kwargs, const std::string& default_preset, size_t inputs) {
  Call call;
  std::optional<std::string> preset;
  BatchOptions given_batching;  // the keywords' batching, over the preset's
  std::vector<const BatchOptionSpec*> batching_given;
  for (const auto& [key, value] : kwargs) {
    const std::string name = key.cast<std::string>();
    if (value.is_none()) continue;
    if (name == "preset") {
      preset = path_arg(value, name);
    } else if (const BatchOptionSpec* spec = find_batch_option(name)) {
      set_option(given_batching, *spec, value);
      batching_given.push_back(spec);
    } else if (name == "return_attention") {
      call.decode.return_attention = bool_arg(value, name);
    } else if (name == "return_scores") {
      call.decode.return_scores = bool_arg(value, name);
    } else if (name == "glossary") {
      call.decode.glossary = glossary_of(value);
    } else if (name == "long_input") {
      call.long_input.mode = parse_long_input(str_arg(value, name), name);
      call.long_input_given = name;
    } else if (name == "chunk_tokens") {
      if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value))
        type_error("chunk_tokens must be an int, not " + type_name(value));
      const OptionValue tokens = option_value(value);
      if (!std::holds_alternative<int64_t>(tokens.value)) throw Error("chunk_tokens is out of range");
      call.long_input.chunk_tokens = std::get<int64_t>(tokens.value);
      call.long_input_given = name;
    } else if (name == decode_option_spec(&DecodeOptions::target_prefix).name && py::isinstance<py::list>(value)) {
      // CTranslate2's shape: one prefix per input (None or "" = none).
      const py::list list = value.cast<py::list>();
      if (list.size() != inputs)
        throw Error("target_prefix has " + std::to_string(list.size()) + " entries for " + std::to_string(inputs) +
                    " inputs: one prefix per input (or one str for all)");
      for (const py::handle& item : list)
        call.target_prefixes.push_back(item.is_none() ? std::string() : str_arg(item, "target_prefix's entries"));
    } else {
      const DecodeOptionSpec* spec = find_decode_option(name);
      if (!spec) type_error("unexpected keyword argument '" + name + "' (options: " + known_options() + ")");
      set_option(call.decode, *spec, value);
    }
  }
  const std::string file = preset_file(preset.value_or(default_preset));
  call.decode.preset = std::make_shared<DecodeOptions>(load_preset(file));
  call.batching = load_preset_batching(file);
  for (const BatchOptionSpec* spec : batching_given) spec->set(call.batching, spec->value(given_batching));
  return call;
}

// ---------------------------------------------------------------- the translator

struct PyTranslator {
  std::shared_ptr<const Translator> translator;
  std::string model_path;

  std::vector<TranslationResult> translate(const std::vector<std::string>& sources, Call& call) const {
    if (!call.long_input_given.empty())
      type_error("unexpected keyword argument '" + call.long_input_given + "' (an option of summarize)");
    auto flag = call.flag;
    call.decode.cancelled = [flag] { return flag->stop.load(); };
    auto model = translator;
    return run_released<std::vector<TranslationResult>>(flag, [model, sources, call] {
      return model->translate(sources, call.decode, call.batching, call.target_prefixes);
    });
  }

  // Summarizes `documents`, a long one in parts (summarize_documents).
  std::vector<TranslationResult> summarize(const std::vector<std::string>& documents, Call& call) const {
    summarization_task(call);
    const LongInputOptions long_input = call.long_input;
    call.long_input_given.clear();
    if (!call.target_prefixes.empty()) return translate(documents, call);  // each prefix its document's
    auto flag = call.flag;
    call.decode.cancelled = [flag] { return flag->stop.load(); };
    auto model = translator;
    return run_released<std::vector<TranslationResult>>(flag, [model, documents, call, long_input] {
      return summarize_documents(*model, documents, call.decode, long_input, call.batching);
    });
  }

  // `ordo summarize`: a folder with a summarization task (T5) runs it unless a task is given.
  void summarization_task(Call& call) const {
    const std::vector<std::string> tasks = translator->tasks();
    if (!call.decode.task && std::count(tasks.begin(), tasks.end(), "summarization"))
      call.decode.task = "summarization";
  }
};

// threads as `ordo -t` takes them (0 = all cores); how many inter_threads the system can
// start is the library's to say.
ModelOptions model_options_of(const py::handle& compute_type, const py::handle& threads,
                              const py::handle& inter_threads, const py::handle& weight_cache) {
  ModelOptions o;
  for (const auto& [name, value] : {std::pair{"compute_type", compute_type},
                                    {"threads", threads},
                                    {"inter_threads", inter_threads},
                                    {"weight_cache", weight_cache}})
    set_option(o, *find_model_option(name), value);
  // Warnings go to Python's warnings module (the library never prints): collected during
  // loading, which runs without the GIL, and issued afterwards.
  return o;
}

// ---------------------------------------------------------------- generate_tokens

// A translation running on its own thread whose tokens are read one by one from Python.
// The queue is short, so decoding keeps at most a few tokens ahead of the reader; close()
// (the Python generator's end, or a break out of its loop) stops the decoding at its next step.
class TokenStream {
 public:
  TokenStream(std::shared_ptr<const Translator> model, std::string source, Call call)
      : model_(std::move(model)), flag_(call.flag) {
    auto flag = flag_;
    call.decode.cancelled = [flag] { return flag->stop.load(); };
    call.decode.on_token = [this](const TokenEvent& event) { return push(event); };
    runner_ = std::thread([this, source = std::move(source), call = std::move(call)] {
      try {
        model_->translate({source}, call.decode, call.batching);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!flag_->stop) error_ = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
      changed_.notify_all();
    });
  }
  ~TokenStream() { close(); }

  // The next event as a tuple (id, piece, log_prob, text, done), or None at the end. The
  // mutex is only taken without the GIL (close() takes it with the GIL held).
  py::object next() {
    while (true) {
      std::optional<TokenEvent> event;
      bool finished = false;
      std::exception_ptr error;
      {
        py::gil_scoped_release release;
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait_for(lock, std::chrono::milliseconds(20), [this] { return !events_.empty() || finished_; });
        if (!events_.empty()) {
          event = std::move(events_.front());
          events_.pop_front();
          changed_.notify_all();
        } else if (finished_) {
          finished = true;
          std::swap(error, error_);
        }
      }
      if (event) return py::make_tuple(event->id, event->piece, event->log_prob, event->text, event->done);
      if (finished) {
        if (error) std::rethrow_exception(error);
        return py::none();
      }
      if (PyErr_CheckSignals() != 0) {  // Ctrl-C while waiting for a token
        py::error_already_set interrupted;
        close();
        throw interrupted;
      }
    }
  }

  // Stops the decoding (if still running) and waits for its thread.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      flag_->stop = true;
      changed_.notify_all();
    }
    if (runner_.joinable()) {
      py::gil_scoped_release release;
      runner_.join();
    }
  }

  // Tokens the decoding produced (read or not): how far it went.
  size_t produced() const { return produced_; }

 private:
  bool push(const TokenEvent& event) {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return events_.size() < kAhead || flag_->stop; });
    if (flag_->stop) return false;
    events_.push_back(event);
    if (!event.done) ++produced_;
    changed_.notify_all();
    return true;
  }

  static constexpr size_t kAhead = 4;
  std::shared_ptr<const Translator> model_;
  std::shared_ptr<CancelFlag> flag_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<TokenEvent> events_;
  std::exception_ptr error_;
  std::atomic<size_t> produced_{0};
  bool finished_ = false;
  std::thread runner_;
};

// ---------------------------------------------------------------- results as Python values

py::list matrix(const std::vector<float>& values, int64_t rows, int64_t columns) {
  py::list out;
  for (int64_t r = 0; r < rows; ++r) {
    py::list row;
    for (int64_t c = 0; c < columns; ++c) row.append(values[static_cast<size_t>(r * columns + c)]);
    out.append(row);
  }
  return out;
}

// ---------------------------------------------------------------- speech (faster-whisper's shape)

// Audio as faster-whisper takes it: a path (str, os.PathLike), an encoded file's bytes (bytes,
// bytearray, memoryview), a binary file object (its read()), or 16 kHz mono samples (a 1-D
// numpy array, converted to float32). Files are decoded without the GIL.
std::vector<float> audio_arg(const py::handle& audio, const std::string& name, bool samples_allowed = true) {
  if (py::isinstance<py::str>(audio) || py::hasattr(audio, "__fspath__")) {
    const std::string path = path_arg(audio, name);
    py::gil_scoped_release release;
    return read_audio(path);
  }
  std::string label = "<bytes>";
  py::object data;
  if (py::isinstance<py::bytes>(audio) || py::isinstance<py::bytearray>(audio) ||
      py::isinstance<py::memoryview>(audio)) {
    data = py::module_::import("builtins").attr("bytes")(audio);
  } else if (samples_allowed && py::isinstance<py::array>(audio)) {
    const auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(audio);
    if (!array) throw Error(name + ": the numpy array's values are not numbers (16 kHz mono float32 samples)");
    if (array.ndim() != 1)
      throw Error(name + ": a numpy array of " + std::to_string(array.ndim()) +
                  " dimensions; samples are one (16 kHz mono float32)");
    return std::vector<float>(array.data(), array.data() + array.size());
  } else if (py::hasattr(audio, "read")) {
    data = audio.attr("read")();
    if (!py::isinstance<py::bytes>(data))
      type_error(name + ": the file object's read() gave " + type_name(data) + ", not bytes (open it with \"rb\")");
    if (py::hasattr(audio, "name") && py::isinstance<py::str>(audio.attr("name"))) label = utf8_of(audio.attr("name"));
  } else {
    type_error(name + " must be a path, bytes, a binary file object" +
               std::string(samples_allowed ? " or a numpy array of 16 kHz mono samples" : "") + ", not " +
               type_name(audio));
  }
  std::string bytes = data.cast<std::string>();
  py::gil_scoped_release release;
  return decode_audio(bytes, label);
}

py::array_t<float> numpy_of(const std::vector<float>& values) {
  return py::array_t<float>(static_cast<py::ssize_t>(values.size()), values.data());
}

// A float of a keyword (an int is fine), naming it.
float float_arg(const py::handle& value, const std::string& name) {
  if (py::isinstance<py::bool_>(value) || !(py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)))
    type_error(name + " must be a float, not " + type_name(value));
  return value.cast<float>();
}

// temperature=: one number, or a list/tuple of them (faster-whisper's fallback list).
std::vector<float> temperatures_arg(const py::handle& value) {
  if (py::isinstance<py::float_>(value) || py::isinstance<py::int_>(value)) return {float_arg(value, "temperature")};
  if (!(py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)))
    type_error("temperature must be a float or a list of floats, not " + type_name(value));
  std::vector<float> out;
  for (const py::handle& item : value) out.push_back(float_arg(item, "temperature's items"));
  return out;
}

std::optional<float> threshold_arg(const py::handle& value, const std::string& name) {
  if (value.is_none()) return std::nullopt;
  return float_arg(value, name);
}

// A keyword beyond transcribe()'s own: a decoding option of the table (the library refuses
// those that do not apply to speech, naming them) or batch_size / batch_tokens.
void set_speech_option(TranscribeOptions& options, const std::string& name, const py::handle& value) {
  if (const BatchOptionSpec* spec = find_batch_option(name)) return set_option(options.batching, *spec, value);
  const DecodeOptionSpec* spec = find_decode_option(name);
  if (!spec) type_error("unexpected keyword argument '" + name + "'");
  set_option(options.decode, *spec, value);
}

struct PyWhisper {
  std::shared_ptr<const SpeechRecognizer> model;
  std::string model_path;
};

// faster-whisper's TranscriptionInfo. all_language_probs is computed when first read (one more
// encoder pass over the first 30 s), and only when the language was detected.
struct PyTranscriptionInfo {
  std::string language;
  float language_probability = 1.0f;
  double duration = 0.0;
  std::shared_ptr<const SpeechRecognizer> model;
  std::shared_ptr<const std::vector<float>> first_window;  // null when the language was given
  std::optional<std::vector<std::pair<std::string, float>>> probabilities;

  py::object all_language_probs() {
    if (!first_window) return py::none();
    if (!probabilities) {
      auto flag = std::make_shared<CancelFlag>();
      auto m = model;
      auto samples = first_window;
      probabilities = run_released<std::vector<std::pair<std::string, float>>>(
          flag, [m, samples] { return m->detect_language(*samples); });
    }
    return py::cast(*probabilities);
  }
};

// features=: one [n_mels][3000] array, a [batch][n_mels][3000] array, or a list of [n_mels][3000].
std::vector<std::vector<float>> features_arg(const py::handle& value, int64_t n_mels) {
  std::vector<std::vector<float>> out;
  const auto add = [&](const py::handle& item, const std::string& where) {
    const auto array = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(item);
    if (!array) type_error(where + " must be a numpy array of floats");
    if (array.ndim() == 3) {
      for (py::ssize_t b = 0; b < array.shape(0); ++b) {
        const py::ssize_t size = array.shape(1) * array.shape(2);
        if (array.shape(1) != n_mels)
          throw Error(where + ": " + std::to_string(array.shape(1)) + " mel bins, the model takes " +
                      std::to_string(n_mels));
        out.emplace_back(array.data() + b * size, array.data() + (b + 1) * size);
      }
      return;
    }
    if (array.ndim() != 2 || array.shape(0) != n_mels)
      throw Error(where + ": features are [" + std::to_string(n_mels) + "][3000] (as features() gives them)");
    out.emplace_back(array.data(), array.data() + array.size());
  };
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    size_t k = 0;
    for (const py::handle& item : value) add(item, "features[" + std::to_string(k++) + "]");
  } else {
    add(value, "features");
  }
  return out;
}

}  // namespace

// A table of options as Python dicts (name, flag, type, min, max, help, in_preset, choices).
template <class Spec>
py::list option_table(const std::vector<Spec>& specs) {
  static const char* const kTypes[] = {"int", "float", "bool", "str", "choice"};
  py::list out;
  for (const Spec& spec : specs) {
    py::dict d;
    d["name"] = spec.name;
    d["flag"] = spec.flag;
    d["type"] = kTypes[static_cast<int>(spec.type)];
    d["min"] = spec.min;
    d["max"] = spec.max;
    d["help"] = spec.help;
    d["in_preset"] = spec.in_preset;
    d["choices"] = spec.choices;
    d["metavar"] = spec.metavar();
    out.append(d);
  }
  return out;
}

// The value `text` stands for in `spec`'s option; ordo.Error naming the option when none.
template <class Spec>
py::object parsed(const Spec& spec, const std::string& text) {
  typename Spec::OptionsType scratch;
  spec.set_text(scratch, text);
  return python_value(spec.value(scratch));
}

PYBIND11_MODULE(_ordo, m) {
  m.doc() = "ordo: translation, summarization and speech recognition with encoder-decoder transformers (C++ engine)";
  // Every failure the library reports, with the message the command line prints after "ordo: error: ".
  py::register_exception<Error>(m, "Error", PyExc_Exception);
  m.attr("__version__") = version();

  m.def(
      "decode_options", [] { return option_table(decode_option_specs()); },
      "The decoding options every call takes as keywords (the one table ordo's command line and server read "
      "too): dicts with name, flag, type, min, max, help, in_preset.");
  m.def(
      "model_options", [] { return option_table(model_option_specs()); },
      "The options of Translator(...) (compute_type, threads, ...), as decode_options() lists its options.");
  m.def(
      "batch_options", [] { return option_table(batch_option_specs()); },
      "The batching keywords every call takes (batch_size, batch_tokens), as decode_options() lists its options.");
  m.def(
      "parse_option",
      [](const std::string& name, const std::string& text) {
        // The value `text` stands for, read by the option's table as a flag of `ordo translate` is.
        if (const DecodeOptionSpec* spec = find_decode_option(name)) return parsed(*spec, text);
        if (const ModelOptionSpec* spec = find_model_option(name)) return parsed(*spec, text);
        if (const BatchOptionSpec* spec = find_batch_option(name)) return parsed(*spec, text);
        throw Error("no option named '" + name + "' (options: " + known_options() + ")");
      },
      py::arg("name"), py::arg("text"),
      "The value of option `name` (of decode_options(), model_options() or batch_options()) that `text` stands "
      "for, as the command line reads the option's flag; ordo.Error naming the option when it is not one.");
  m.def(
      "split_sentences",
      [](const py::object& text_arg, const py::object& language) {
        const std::string text = str_arg(text_arg, "text");
        std::vector<std::string> out;
        for (const SentenceSpan& span : split_sentences(text, str_arg(language, "language")))
          out.push_back(text.substr(span.begin, span.end - span.begin));
        return out;
      },
      py::arg("text"), py::arg("language") = "",
      "The sentences of `text` (ICU's rules for `language`, e.g. \"en\"; \"\" = root rules), in order, trimmed.");
  m.def(
      "resolve_model_dir", [](const py::object& name) { return resolve_model_dir(path_arg(name, "name_or_path")); },
      py::arg("name_or_path"),
      "The folder a model argument means: a path as given, or a bundled model by name (\"en-de\").");

  py::class_<Hypothesis>(m, "Hypothesis")
      .def_readonly("text", &Hypothesis::text)
      .def_readonly("tokens", &Hypothesis::tokens)
      .def_readonly("ids", &Hypothesis::ids)
      .def_readonly("score", &Hypothesis::score)
      .def_property_readonly(
          "attention",
          [](const Hypothesis& h) -> py::object {
            if (h.attention.empty()) return py::none();
            return matrix(h.attention.averaged, h.attention.target_length, h.attention.source_length);
          },
          "With return_attention: [target][source] weights (the mean of the heads of the alignment layer)")
      .def_property_readonly(
          "attention_weights",
          [](const Hypothesis& h) -> py::object {
            const Attention& a = h.attention;
            if (a.empty()) return py::none();
            py::list layers;
            for (int64_t l = 0; l < a.layers; ++l) {
              py::list heads;
              for (int64_t hd = 0; hd < a.heads; ++hd) {
                const size_t offset = static_cast<size_t>((l * a.heads + hd) * a.target_length * a.source_length);
                std::vector<float> part(
                    a.weights.begin() + static_cast<std::ptrdiff_t>(offset),
                    a.weights.begin() + static_cast<std::ptrdiff_t>(offset + a.target_length * a.source_length));
                heads.append(matrix(part, a.target_length, a.source_length));
              }
              layers.append(heads);
            }
            return layers;
          },
          "With return_attention: [layer][head][target][source], every layer and head")
      .def_readonly("id_pieces", &Hypothesis::id_pieces)
      .def("__repr__", [](const Hypothesis& h) {
        return "Hypothesis(text=" + std::string(py::repr(py::str(h.text))) + ", score=" + std::to_string(h.score) + ")";
      });

  py::class_<TranslationResult>(m, "TranslationResult")
      .def_readonly("hypotheses", &TranslationResult::hypotheses)
      .def_readonly("source_tokens", &TranslationResult::source_tokens)
      .def_readonly("source_ids", &TranslationResult::source_ids)
      .def_readonly("truncated_tokens", &TranslationResult::truncated_tokens)
      .def("__repr__", [](const TranslationResult& r) {
        return "TranslationResult(hypotheses=" + std::string(py::repr(py::cast(r.hypotheses))) + ")";
      });

  py::class_<ScoreResult>(m, "ScoreResult")
      .def_readonly("ids", &ScoreResult::ids)
      .def_readonly("tokens", &ScoreResult::tokens)
      .def_readonly("log_probs", &ScoreResult::log_probs)
      .def_readonly("score", &ScoreResult::score)
      .def("__repr__", [](const ScoreResult& r) { return "ScoreResult(score=" + std::to_string(r.score) + ")"; });

  py::class_<DocumentTranslation>(m, "DocumentTranslation")
      .def_readonly("text", &DocumentTranslation::text)
      .def_property_readonly(
          "sentences",
          [](const DocumentTranslation& d) {
            py::list out;
            for (const SentenceSpan& s : d.sentences) out.append(py::make_tuple(s.begin, s.end));
            return out;
          },
          "Where each source sentence lies in the unit: (begin, end) UTF-8 byte offsets")
      .def_readonly("results", &DocumentTranslation::results)
      .def("__repr__", [](const DocumentTranslation& d) {
        return "DocumentTranslation(text=" + std::string(py::repr(py::str(d.text))) + ")";
      });

  py::class_<TokenStream>(m, "_TokenStream")
      .def("next", &TokenStream::next)
      .def("close", &TokenStream::close)
      .def_property_readonly("produced", &TokenStream::produced);

  py::class_<PyTranslator>(m, "Translator")
      .def(py::init([](const py::object& model_path, const py::object& compute_type, const py::object& threads,
                       const py::object& inter_threads, const py::object& weight_cache, const py::object& device_arg) {
             // CTranslate2's device argument, so that its code ports unchanged: ordo runs on the CPU.
             const std::string device = str_arg(device_arg, "device");
             if (device != "cpu" && device != "auto")
               throw Error("device '" + device + "': ordo runs on the CPU only (device=\"cpu\")");
             ModelOptions options = model_options_of(compute_type, threads, inter_threads, weight_cache);
             auto warnings = std::make_shared<std::vector<std::string>>();
             options.on_warning = [warnings](const std::string& w) { warnings->push_back(w); };
             const std::string dir = resolve_model_dir(path_arg(model_path, "model_path"));
             std::shared_ptr<const Translator> model;
             {
               py::gil_scoped_release release;
               model = std::make_shared<const Translator>(dir, options);
             }
             for (const std::string& w : *warnings)
               if (PyErr_WarnEx(PyExc_RuntimeWarning, ("ordo: " + w).c_str(), 1) < 0) throw py::error_already_set();
             return PyTranslator{std::move(model), dir};
           }),
           py::arg("model_path"), py::arg("compute_type") = "float32", py::arg("threads") = 0,
           py::arg("inter_threads") = 1, py::arg("weight_cache") = true, py::arg("device") = "cpu")
      .def_readonly("model_path", &PyTranslator::model_path)
      .def_property_readonly("languages", [](const PyTranslator& t) { return t.translator->languages(); })
      .def_property_readonly("tasks", [](const PyTranslator& t) { return t.translator->tasks(); })
      .def(
          "translate_batch",
          [](const PyTranslator& t, const py::object& sources, const py::kwargs& kwargs) {
            const std::vector<std::string> inputs = strings_arg(sources, "sources");
            Call call = call_of(kwargs, "translation", inputs.size());
            return t.translate(inputs, call);
          },
          py::arg("sources"))
      .def(
          "translate",
          [](const PyTranslator& t, const py::object& text, const py::kwargs& kwargs) {
            const std::vector<std::string> inputs{str_arg(text, "text")};
            Call call = call_of(kwargs, "translation", 1);
            return t.translate(inputs, call)[0].hypotheses[0].text;
          },
          py::arg("text"), "Translates one text; the best hypothesis' text.")
      .def(
          "summarize",
          [](const PyTranslator& t, const py::object& document, const py::kwargs& kwargs) {
            const std::vector<std::string> inputs{str_arg(document, "document")};
            Call call = call_of(kwargs, "summarization", 1);
            return t.summarize(inputs, call)[0].hypotheses[0].text;
          },
          py::arg("document"), "Summarizes one document; the best hypothesis' text.")
      .def(
          "summarize_batch",
          [](const PyTranslator& t, const py::object& documents, const py::kwargs& kwargs) {
            const std::vector<std::string> inputs = strings_arg(documents, "documents");
            Call call = call_of(kwargs, "summarization", inputs.size());
            return t.summarize(inputs, call);
          },
          py::arg("documents"))
      .def(
          "score_batch",
          [](const PyTranslator& t, const py::object& sources, const py::object& targets, const py::kwargs& kwargs) {
            const std::vector<std::string> in = strings_arg(sources, "sources");
            const std::vector<std::string> out = strings_arg(targets, "targets");
            Call call = call_of(kwargs, "translation", in.size());
            auto flag = call.flag;
            call.decode.cancelled = [flag] { return flag->stop.load(); };
            auto model = t.translator;
            return run_released<std::vector<ScoreResult>>(
                flag, [model, in, out, call] { return model->score(in, out, call.decode, call.batching); });
          },
          py::arg("sources"), py::arg("targets"))
      .def(
          "translate_documents",
          [](const PyTranslator& t, const py::object& units, const py::object& language_arg, const py::kwargs& kwargs) {
            const std::vector<std::string> inputs = strings_arg(units, "units");
            const std::string language = str_arg(language_arg, "language");
            Call call = call_of(kwargs, "translation", inputs.size());
            if (!call.target_prefixes.empty()) throw Error("translate_documents takes no per-input target_prefix");
            auto flag = call.flag;
            call.decode.cancelled = [flag] { return flag->stop.load(); };
            auto model = t.translator;
            return run_released<std::vector<DocumentTranslation>>(flag, [model, inputs, call, language] {
              return translate_documents(*model, inputs, call.decode, language, call.batching);
            });
          },
          py::arg("units"), py::arg("language") = "")
      .def(
          "translate_html",
          [](const PyTranslator& t, const py::object& html_arg, const py::object& language_arg,
             const py::kwargs& kwargs) {
            const std::string html = str_arg(html_arg, "html"), language = str_arg(language_arg, "language");
            Call call = call_of(kwargs, "translation", 1);
            if (!call.target_prefixes.empty()) throw Error("translate_html takes no per-input target_prefix");
            auto flag = call.flag;
            call.decode.cancelled = [flag] { return flag->stop.load(); };
            auto model = t.translator;
            return run_released<std::string>(
                flag, [model, html, call, language] { return translate_html(*model, html, call.decode, language); });
          },
          py::arg("html"), py::arg("language") = "",
          "An HTML document or fragment translated sentence by sentence, its markup kept (ordo translate --format "
          "html)")
      .def(
          "translate_file",
          [](const PyTranslator& t, const py::object& input_arg, const py::object& output_arg,
             const py::object& format_arg, bool translate_fuzzy, bool retranslate, const py::kwargs& kwargs) {
            const std::string input = path_arg(input_arg, "input_path"), output = path_arg(output_arg, "output_path");
            const std::optional<FileFormat> format =
                format_arg.is_none() ? file_format_of(input)
                                     : std::optional(parse_file_format(str_arg(format_arg, "format"), "format"));
            if (!format) throw Error(input + ": no file format has its extension; name it with format=");
            Call call = call_of(kwargs, "translation", 1);
            if (!call.target_prefixes.empty()) throw Error("translate_file takes no per-input target_prefix");
            FileOptions file_options;
            file_options.translate_fuzzy = translate_fuzzy;
            file_options.retranslate = retranslate;
            auto flag = call.flag;
            call.decode.cancelled = [flag] { return flag->stop.load(); };
            auto model = t.translator;
            run_released<int>(flag, [model, input, output, format, call, file_options] {
              const std::string bytes = read_file_bytes(input);
              std::string translated;
              try {
                translated = translate_file(*model, bytes, *format, call.decode, file_options, call.batching);
              } catch (const Error& e) {
                throw Error(input + ": " + e.what());
              }
              write_file_whole(output, translated);  // renamed over it once whole
              return 0;
            });
            return output;
          },
          py::arg("input_path"), py::arg("output_path"), py::arg("format") = py::none(),
          py::arg("translate_fuzzy") = false, py::arg("retranslate") = false,
          "A file (.docx .pptx .xlsx .odt .odp .ods .epub .html .txt .srt .vtt .po .xliff .json) translated whole "
          "and written to output_path with its layout kept (ordo translate -i FILE -o OUT); the output path")
      .def(
          "_token_stream",
          [](const PyTranslator& t, const py::object& source_arg, bool summarize, const py::kwargs& kwargs) {
            std::string source = str_arg(source_arg, summarize ? "document" : "source");
            Call call = call_of(kwargs, summarize ? "summarization" : "translation", 1);
            if (summarize) t.summarization_task(call);
            if (!summarize && !call.long_input_given.empty())
              type_error("unexpected keyword argument '" + call.long_input_given + "' (an option of summarize)");
            // A document longer than the model is summarized in parts (summarize()), which has
            // no one token order to stream; cut (long_input="truncate") it streams.
            if (summarize && call.long_input.mode != LongInput::kTruncate) {
              const size_t tokens = t.translator->encode(source, call.decode).size();
              const int64_t limit = t.translator->max_source_tokens();
              if (tokens > static_cast<size_t>(limit))
                throw Error("the document has " + std::to_string(tokens) + " tokens, more than the " +
                            std::to_string(limit) +
                            " the model takes: summarized in parts, it does not stream (use summarize(), or "
                            "long_input=\"truncate\")");
            }
            if (!call.target_prefixes.empty()) call.decode.target_prefix = call.target_prefixes[0];
            call.target_prefixes.clear();
            // Token by token needs one greedy or sampled hypothesis (beam search has no final
            // token before it ends).
            const std::string beam = decode_option_spec(&DecodeOptions::beam_size).name;
            const std::string n_best = decode_option_spec(&DecodeOptions::n_best).name;
            if (call.decode.beam_size.value_or(1) > 1)
              throw Error("generate_tokens decodes greedily or by sampling: " + beam + " must be 1");
            if (call.decode.n_best.value_or(1) > 1)
              throw Error("generate_tokens gives one hypothesis: " + n_best + " must be 1");
            call.decode.beam_size = 1;
            call.decode.n_best = 1;
            return std::make_unique<TokenStream>(t.translator, source, std::move(call));
          },
          py::arg("source"), py::arg("summarize") = false)
      .def("__repr__", [](const PyTranslator& t) {
        return "ordo.Translator(" + std::string(py::repr(py::str(t.model_path))) + ")";
      });

  // ---------------------------------------------------------------- speech
  m.def(
      "decode_audio",
      [](const py::object& input, const py::object& sampling_rate) {
        if (!py::isinstance<py::int_>(sampling_rate) || sampling_rate.cast<int64_t>() != kSpeechSampleRate)
          throw Error("sampling_rate: ordo decodes audio to " + std::to_string(kSpeechSampleRate) + " Hz only");
        return numpy_of(audio_arg(input, "input", false));
      },
      py::arg("input"), py::arg("sampling_rate") = kSpeechSampleRate,
      "An audio file (a path, bytes or a binary file object; any format FFmpeg reads) as 16 kHz mono float32 "
      "samples in [-1, 1]: a 1-D numpy array.");

  py::class_<Word>(m, "Word")
      .def_readonly("start", &Word::start)
      .def_readonly("end", &Word::end)
      .def_readonly("word", &Word::word)
      .def_readonly("probability", &Word::probability)
      .def("__repr__", [](const Word& w) {
        return "Word(start=" + std::string(py::repr(py::float_(w.start))) +
               ", end=" + std::string(py::repr(py::float_(w.end))) +
               ", word=" + std::string(py::repr(py::str(w.word))) +
               ", probability=" + std::string(py::repr(py::float_(w.probability))) + ")";
      });

  py::class_<Segment>(m, "Segment")
      .def_readonly("id", &Segment::id)
      .def_readonly("seek", &Segment::seek)
      .def_readonly("start", &Segment::start)
      .def_readonly("end", &Segment::end)
      .def_readonly("text", &Segment::text)
      .def_readonly("tokens", &Segment::tokens)
      .def_readonly("avg_logprob", &Segment::avg_logprob)
      .def_readonly("compression_ratio", &Segment::compression_ratio)
      .def_readonly("no_speech_prob", &Segment::no_speech_prob)
      .def_readonly("temperature", &Segment::temperature)
      .def_property_readonly(
          "words", [](const Segment& s) -> py::object { return s.words.empty() ? py::none() : py::cast(s.words); },
          "With word_timestamps: the segment's words (Word(start, end, word, probability)); None otherwise")
      .def("__repr__", [](const Segment& s) {
        return "Segment(id=" + std::to_string(s.id) + ", seek=" + std::to_string(s.seek) +
               ", start=" + std::string(py::repr(py::float_(s.start))) +
               ", end=" + std::string(py::repr(py::float_(s.end))) +
               ", text=" + std::string(py::repr(py::str(s.text))) + ")";
      });

  py::class_<PyTranscriptionInfo>(m, "TranscriptionInfo")
      .def_readonly("language", &PyTranscriptionInfo::language)
      .def_readonly("language_probability", &PyTranscriptionInfo::language_probability)
      .def_readonly("duration", &PyTranscriptionInfo::duration)
      .def_property_readonly("all_language_probs", &PyTranscriptionInfo::all_language_probs,
                             "When the language was detected: [(code, probability)] of every language, most likely "
                             "first (computed when first read); None when it was given")
      .def("__repr__", [](const PyTranscriptionInfo& i) {
        return "TranscriptionInfo(language=" + std::string(py::repr(py::str(i.language))) +
               ", language_probability=" + std::string(py::repr(py::float_(i.language_probability))) +
               ", duration=" + std::string(py::repr(py::float_(i.duration))) + ")";
      });

  py::class_<SpeechGeneration>(m, "SpeechGeneration")
      .def_readonly("ids", &SpeechGeneration::ids)
      .def_readonly("scores", &SpeechGeneration::scores);

  // transcribe()'s defaults are openai-whisper's (as faster-whisper's), shown as Python writes them.
  const TranscribeOptions whisper_defaults = openai_whisper_options();
  const auto shown = [](float v) { return std::round(static_cast<double>(v) * 1e6) / 1e6; };
  std::vector<double> default_temperatures;
  for (float t : whisper_defaults.temperatures) default_temperatures.push_back(shown(t));
  py::class_<PyWhisper>(m, "Whisper")
      .def(py::init([](const py::object& model_path, const py::object& device_arg, const py::object& compute_type,
                       const py::object& cpu_threads, const py::object& inter_threads, const py::object& weight_cache) {
             const std::string device = str_arg(device_arg, "device");
             if (device != "cpu" && device != "auto")
               throw Error("device '" + device + "': ordo runs on the CPU only (device=\"cpu\")");
             // faster-whisper's "default" is the checkpoint's own arithmetic: float32 here.
             const py::object type = py::isinstance<py::str>(compute_type) && utf8_of(compute_type) == "default"
                                         ? py::str("float32")
                                         : compute_type;
             ModelOptions options = model_options_of(type, cpu_threads, inter_threads, weight_cache);
             auto warnings = std::make_shared<std::vector<std::string>>();
             options.on_warning = [warnings](const std::string& w) { warnings->push_back(w); };
             const std::string dir = resolve_model_dir(path_arg(model_path, "model_path"));
             std::shared_ptr<const SpeechRecognizer> model;
             {
               py::gil_scoped_release release;
               model = std::make_shared<const SpeechRecognizer>(dir, options);
             }
             for (const std::string& w : *warnings)
               if (PyErr_WarnEx(PyExc_RuntimeWarning, ("ordo: " + w).c_str(), 1) < 0) throw py::error_already_set();
             return PyWhisper{std::move(model), dir};
           }),
           py::arg("model_path"), py::arg("device") = "cpu", py::arg("compute_type") = "default",
           py::arg("cpu_threads") = 0, py::arg("inter_threads") = 1, py::arg("weight_cache") = true)
      .def_readonly("model_path", &PyWhisper::model_path)
      .def_property_readonly("is_multilingual", [](const PyWhisper& w) { return w.model->multilingual(); })
      .def_property_readonly("supported_languages", [](const PyWhisper& w) { return w.model->languages(); })
      .def(
          "transcribe",
          [](const PyWhisper& w, const py::object& audio, const py::object& language, const py::object& task,
             const py::object& beam_size, const py::object& temperature, const py::object& compression_ratio_threshold,
             const py::object& log_prob_threshold, const py::object& no_speech_threshold,
             const py::object& condition_on_previous_text, const py::object& initial_prompt,
             const py::object& word_timestamps, const py::object& without_timestamps, const py::object& max_new_tokens,
             const py::kwargs& kwargs) {
            auto samples = std::make_shared<const std::vector<float>>(audio_arg(audio, "audio"));
            TranscribeOptions o;
            o.language = language.is_none() ? "" : str_arg(language, "language");
            if (o.language == "auto") o.language.clear();
            o.task = str_arg(task, "task");
            if (!beam_size.is_none()) set_option(o.decode, decode_option_spec(&DecodeOptions::beam_size), beam_size);
            if (!max_new_tokens.is_none())
              set_option(o.decode, decode_option_spec(&DecodeOptions::max_new_tokens), max_new_tokens);
            o.temperatures = temperatures_arg(temperature);
            o.compression_ratio_threshold = threshold_arg(compression_ratio_threshold, "compression_ratio_threshold");
            o.log_prob_threshold = threshold_arg(log_prob_threshold, "log_prob_threshold");
            o.no_speech_threshold = threshold_arg(no_speech_threshold, "no_speech_threshold");
            o.condition_on_previous_text = bool_arg(condition_on_previous_text, "condition_on_previous_text");
            o.initial_prompt = initial_prompt.is_none() ? "" : str_arg(initial_prompt, "initial_prompt");
            o.word_timestamps = bool_arg(word_timestamps, "word_timestamps");
            o.timestamps = !bool_arg(without_timestamps, "without_timestamps");
            for (const auto& [key, value] : kwargs)
              if (!value.is_none()) set_speech_option(o, key.cast<std::string>(), value);
            auto flag = std::make_shared<CancelFlag>();
            o.decode.cancelled = [flag] { return flag->stop.load(); };
            auto model = w.model;
            Transcription t =
                run_released<Transcription>(flag, [model, samples, o] { return model->transcribe(*samples, o); });
            PyTranscriptionInfo info;
            info.language = t.language;
            info.language_probability = t.language_probability;
            info.duration = t.duration;
            info.model = model;
            if (o.language.empty() && model->multilingual()) {
              const size_t window = std::min<size_t>(samples->size(), 30 * kSpeechSampleRate);
              info.first_window =
                  std::make_shared<const std::vector<float>>(samples->begin(), samples->begin() + window);
            }
            return py::make_tuple(py::cast(std::move(t.segments)), py::cast(std::move(info)));
          },
          py::arg("audio"), py::arg("language") = py::none(), py::arg("task") = "transcribe", py::arg("beam_size") = 5,
          py::arg("temperature") = py::tuple(py::cast(default_temperatures)),
          py::arg("compression_ratio_threshold") = shown(*whisper_defaults.compression_ratio_threshold),
          py::arg("log_prob_threshold") = shown(*whisper_defaults.log_prob_threshold),
          py::arg("no_speech_threshold") = shown(*whisper_defaults.no_speech_threshold),
          py::arg("condition_on_previous_text") = true,
          py::arg("initial_prompt") = py::none(), py::arg("word_timestamps") = false,
          py::arg("without_timestamps") = false, py::arg("max_new_tokens") = py::none(),
          "(segments, info) as faster-whisper's WhisperModel.transcribe() gives them: the segments (a list of "
          "Segment) and a TranscriptionInfo. `audio`: a path, bytes, a binary file object or 16 kHz mono "
          "float32 samples. Other keywords: the decoding options of decode_options() that apply to speech "
          "(length_penalty, repetition_penalty, no_repeat_ngram_size, seed, ...) and batch_size.")
      .def(
          "detect_language",
          [](const PyWhisper& w, const py::object& audio) {
            auto samples = std::make_shared<const std::vector<float>>(audio_arg(audio, "audio"));
            auto flag = std::make_shared<CancelFlag>();
            auto model = w.model;
            const auto probabilities = run_released<std::vector<std::pair<std::string, float>>>(
                flag, [model, samples] { return model->detect_language(*samples); });
            if (probabilities.empty()) throw Error("detect_language: the model gave no language");
            return py::make_tuple(probabilities[0].first, probabilities[0].second, probabilities);
          },
          py::arg("audio"),
          "(language, probability, all_language_probs) of the first 30 s, as faster-whisper's detect_language()")
      .def(
          "features",
          [](const PyWhisper& w, const py::object& audio) {
            const std::vector<float> samples = audio_arg(audio, "audio");
            std::vector<float> features;
            {
              py::gil_scoped_release release;
              features = w.model->features(samples);
            }
            const py::ssize_t mels = w.model->n_mels();
            py::array_t<float> out({mels, static_cast<py::ssize_t>(features.size()) / mels});
            std::copy(features.begin(), features.end(), out.mutable_data());
            return out;
          },
          py::arg("audio"),
          "The log-mel features of the first 30 s: [n_mels][3000] float32, as transformers' "
          "WhisperFeatureExtractor")
      .def(
          "generate",
          [](const PyWhisper& w, const py::object& features, const py::object& language, const py::object& task,
             const py::object& timestamps, const py::kwargs& kwargs) {
            const std::vector<std::vector<float>> f = features_arg(features, w.model->n_mels());
            const std::string lang = language.is_none() ? "" : str_arg(language, "language");
            const std::string t = str_arg(task, "task");
            const bool with_timestamps = bool_arg(timestamps, "timestamps");
            TranscribeOptions o;
            for (const auto& [key, value] : kwargs)
              if (!value.is_none()) set_speech_option(o, key.cast<std::string>(), value);
            auto flag = std::make_shared<CancelFlag>();
            o.decode.cancelled = [flag] { return flag->stop.load(); };
            auto model = w.model;
            const DecodeOptions decode = o.decode;
            return run_released<SpeechGeneration>(flag, [model, f, lang, t, with_timestamps, decode] {
              return model->generate(f, lang, t, with_timestamps, decode);
            });
          },
          py::arg("features"), py::arg("language") = py::none(), py::arg("task") = "transcribe",
          py::arg("timestamps") = false,
          "transformers' generate() on features ([n_mels][3000] each, or a batch): the ids it returns "
          "(SpeechGeneration.ids, start token first) and their scores")
      .def(
          "decode",
          [](const PyWhisper& w, const std::vector<int64_t>& ids, bool with_timestamps) {
            return with_timestamps ? w.model->decode_with_timestamps(ids) : w.model->decode(ids);
          },
          py::arg("ids"), py::arg("with_timestamps") = false,
          "The text of ids (special tokens removed; timestamps as \"<|1.08|>\" with with_timestamps)")
      .def("__repr__",
           [](const PyWhisper& w) { return "ordo.Whisper(" + std::string(py::repr(py::str(w.model_path))) + ")"; });
}
