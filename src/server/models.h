// The models one server serves: loaded once, named, and indexed by the language pairs they
// translate (LibreTranslate's /translate picks a model by source and target).
//
// A Marian folder translates one pair: tokenizer_config.json's source_lang/target_lang, or the
// pair given on the command line (--model en:de=DIR). M2M100 and NLLB serve every ordered pair
// of the languages their tokenizer knows (NLLB's codes are also reachable by ISO 639-1 code:
// "de" = "deu_Latn"). Pegasus folders, and Marian folders whose two languages are the same
// (the bundled dialogsum), summarize. A Whisper folder (config.json's model_type "whisper") is
// an ordo::SpeechRecognizer: it transcribes (POST /v1/audio/*), and no text route offers it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ordo/ordo.h"

namespace ordo::server {

enum class Task { kTranslate, kSummarize, kTranscribe };
const char* task_name(Task task);

// A model as the command line or --models FILE.json names it.
struct ModelSpec {
  std::string name;                      // how clients name it ("model" in /v1)
  std::string dir;                       // its folder
  std::string source_lang, target_lang;  // the pair of a Marian model; empty: from its folder
  std::string task;                      // "translate", "summarize", "transcribe", or empty: from its folder
  ModelOptions options;                  // threads per batch, compute type
};
// Whether two specs load the same model (name, folder, pair, task, threads, compute type).
bool same_spec(const ModelSpec& a, const ModelSpec& b);
// The sizes and modification times of the regular files of a model folder: a folder whose
// files were replaced in place has another fingerprint (a reload loads it again).
std::string folder_fingerprint(const std::string& dir);

struct ServedModel {
  std::string name, dir, model_type;
  Task task = Task::kTranslate;
  std::string source_lang, target_lang;      // one-pair models
  std::map<std::string, std::string> codes;  // multilingual: client code -> the model's code
  std::vector<std::string> languages;        // multilingual: client codes, in the model's order
  ModelOptions options;
  std::shared_ptr<const DecodeOptions> preset;  // the task's preset (configs/)
  int default_beam = 1;                         // beam size with no option given
  // Shared with the batches that run it: a model removed by a reload is freed when its last
  // request and batch are done (service.h).
  std::shared_ptr<const Translator> translator;
  std::shared_ptr<const SpeechRecognizer> recognizer;  // instead of the translator: Task::kTranscribe
  int64_t created = 0;                                 // when it was loaded (Unix seconds; OpenAI's "created")
  ModelSpec spec;           // what loaded it (a reload keeps it when the spec is the same ...
  std::string fingerprint;  // ... and the folder's files are unchanged)
  uint64_t instance = 0;    // unique in the process: batches of two loads of a name never mix

  bool multilingual() const { return !languages.empty(); }
  // The model's code for a client's language code, "" when it does not know it.
  std::string model_code(const std::string& code) const;
};

// Loads one model (ordo::Error naming the model at fault). `translation` and `summarization`
// are the task presets, as `ordo translate` / `ordo summarize` use them.
std::shared_ptr<const ServedModel> load_model(const ModelSpec& spec, std::shared_ptr<const DecodeOptions> translation,
                                              std::shared_ptr<const DecodeOptions> summarization);

class ModelSet {
 public:
  // Loads every model (ordo::Error naming the model at fault).
  ModelSet(const std::vector<ModelSpec>& specs, std::shared_ptr<const DecodeOptions> translation,
           std::shared_ptr<const DecodeOptions> summarization);
  // Models already loaded (a reload's: kept ones and new ones); two of one name are an error.
  explicit ModelSet(std::vector<std::shared_ptr<const ServedModel>> models);

  const std::vector<std::shared_ptr<const ServedModel>>& models() const { return models_; }
  const ServedModel* by_name(const std::string& name) const;
  std::vector<const ServedModel*> of_task(Task task) const;
  // The translation model for source -> target (the first one given wins), nullptr if none.
  const ServedModel* for_pair(const std::string& source, const std::string& target) const;
  // Source languages that some model translates into `target`.
  std::vector<std::string> sources_for(const std::string& target) const;
  // Languages some model translates from (clients' codes), in the order /languages lists them.
  std::vector<std::string> source_languages() const;
  bool serves_language(const std::string& code) const;
  std::string language_list() const;               // "de, en" (clients' codes)
  std::string model_list(Task task) const;         // "en-de, de-en"
  std::string pair_list(size_t limit = 20) const;  // "en->de, de->en"

  nlohmann::json languages_json() const;      // GET /languages (LibreTranslate's shape)
  nlohmann::json models_json() const;         // GET /v1/models' "models"
  nlohmann::json openai_models_json() const;  // its "data": OpenAI's model objects (id, object, created, owned_by)
  // The speech model a request names; "" or "whisper-1" (OpenAI's one name), unless a model is
  // named so, is the first one served. nullptr when there is none of that name (or none at all).
  const ServedModel* speech_model(const std::string& name) const;

 private:
  std::vector<std::shared_ptr<const ServedModel>> models_;
};

}  // namespace ordo::server
