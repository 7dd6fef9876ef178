#include "server/models.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <set>

#include "faces/resolved_settings.h"
#include "ordo/option_table.h"
#include "server/language_codes.h"
#include "server/request_fields.h"

namespace ordo::server {
namespace {

// A JSON file of the model folder; null when it does not exist.
nlohmann::json read_json(const std::string& path, bool required) {
  std::ifstream in(path);
  if (!in) {
    if (required) throw Error(path + ": cannot open");
    return nullptr;
  }
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": invalid JSON (" + e.what() + ")");
  }
}

std::string string_field(const nlohmann::json& json, const char* key) {
  if (!json.is_object() || !json.contains(key) || !json[key].is_string()) return "";
  return json[key].get<std::string>();
}

std::string base_name(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const size_t slash = dir.find_last_of('/');
  return slash == std::string::npos ? dir : dir.substr(slash + 1);
}

// "opus-mt-en-de" -> {"en", "de"}: the hub's naming, for folders whose tokenizer_config.json
// does not say.
std::pair<std::string, std::string> pair_from_name(const std::string& name) {
  const std::string prefix = "opus-mt-";
  if (name.rfind(prefix, 0) != 0) return {};
  const std::string rest = name.substr(prefix.size());
  const size_t dash = rest.find('-');
  if (dash == std::string::npos || rest.find('-', dash + 1) != std::string::npos) return {};
  return {rest.substr(0, dash), rest.substr(dash + 1)};
}

}  // namespace

const char* task_name(Task task) {
  return task == Task::kTranslate ? "translate" : task == Task::kSummarize ? "summarize" : "transcribe";
}

std::string ServedModel::model_code(const std::string& code) const {
  const auto it = codes.find(code);
  return it == codes.end() ? "" : it->second;
}

bool same_spec(const ModelSpec& a, const ModelSpec& b) {
  return a.name == b.name && a.dir == b.dir && a.source_lang == b.source_lang && a.target_lang == b.target_lang &&
         a.task == b.task && a.options.threads == b.options.threads &&
         a.options.compute_type == b.options.compute_type && a.options.weight_cache == b.options.weight_cache;
}

std::string folder_fingerprint(const std::string& dir) {
  std::string out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return "";
  std::vector<std::string> names;
  while (const dirent* e = ::readdir(d)) names.push_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out += name + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + ";";
  }
  return out;
}

std::shared_ptr<const ServedModel> load_model(const ModelSpec& spec, std::shared_ptr<const DecodeOptions> translation,
                                              std::shared_ptr<const DecodeOptions> summarization) {
  static std::atomic<uint64_t> instances{0};
  auto m = std::make_shared<ServedModel>();
  m->name = spec.name.empty() ? base_name(spec.dir) : spec.name;
  m->dir = spec.dir;
  m->options = spec.options;
  m->spec = spec;
  m->fingerprint = folder_fingerprint(spec.dir);
  m->instance = ++instances;
  m->created =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  const nlohmann::json config = read_json(spec.dir + "/config.json", true);
  m->model_type = string_field(config, "model_type");
  if (m->model_type == "whisper") {  // speech: a recognizer, no translator
    if (!spec.task.empty() && spec.task != "transcribe")
      throw Error("model '" + m->name + "': a Whisper model's task is transcribe, not '" + spec.task + "'");
    m->task = Task::kTranscribe;
    try {
      m->recognizer = std::make_shared<const SpeechRecognizer>(spec.dir, spec.options);
    } catch (const Error& e) {
      throw Error("model '" + m->name + "': " + e.what());
    }
    return m;
  }
  const nlohmann::json tokenizer = read_json(spec.dir + "/tokenizer_config.json", false);

  try {
    m->translator = std::make_shared<const Translator>(spec.dir, spec.options);
  } catch (const Error& e) {
    throw Error("model '" + m->name + "': " + e.what());
  }

  for (const std::string& code : m->translator->languages()) {
    // NLLB and mBART-50 codes are also reachable by their ISO 639-1 code, which LibreTranslate
    // clients send ("de" -> "deu_Latn", "de_DE").
    const std::string iso = iso_code_of(code);
    const std::string client = iso.empty() ? code : iso;
    if (m->codes.count(client)) continue;
    m->codes[client] = code;
    m->codes[code] = code;
    m->languages.push_back(client);
  }
  if (!m->multilingual()) {
    m->source_lang = spec.source_lang;
    m->target_lang = spec.target_lang;
    if (m->source_lang.empty() || m->target_lang.empty()) {
      m->source_lang = string_field(tokenizer, "source_lang");
      m->target_lang = string_field(tokenizer, "target_lang");
    }
    if (m->source_lang.empty() || m->target_lang.empty())
      std::tie(m->source_lang, m->target_lang) = pair_from_name(base_name(spec.dir));
  }
  if (!spec.task.empty()) {
    if (spec.task != "translate" && spec.task != "summarize")
      throw Error("model '" + m->name + "': task '" + spec.task + "' is neither translate nor summarize" +
                  (spec.task == "transcribe" ? " (transcribe: a Whisper folder, whose config.json says so)" : ""));
    m->task = spec.task == "translate" ? Task::kTranslate : Task::kSummarize;
  } else if (m->model_type == "pegasus" || m->model_type == "pegasus_x" || m->model_type == "bart" ||
             (!m->multilingual() && !m->source_lang.empty() && m->source_lang == m->target_lang)) {
    m->task = Task::kSummarize;
  }
  if (m->task == Task::kTranslate && !m->multilingual() && (m->source_lang.empty() || m->target_lang.empty()))
    throw Error("model '" + m->name + "': " + spec.dir +
                "/tokenizer_config.json names no source_lang/target_lang; give the pair: --model en:de=" + spec.dir);
  m->preset = m->task == Task::kTranslate ? translation : summarization;
  DecodeOptions defaults;
  defaults.preset = m->preset;
  if (const auto beams = faces::resolved_int(m->translator->resolved_settings(defaults), &DecodeOptions::beam_size))
    m->default_beam = static_cast<int>(std::max<int64_t>(1, *beams));
  return m;
}

ModelSet::ModelSet(const std::vector<ModelSpec>& specs, std::shared_ptr<const DecodeOptions> translation,
                   std::shared_ptr<const DecodeOptions> summarization) {
  if (specs.empty()) throw Error("no model to serve");
  for (const ModelSpec& spec : specs) {
    const std::string name = spec.name.empty() ? base_name(spec.dir) : spec.name;
    if (by_name(name))
      throw Error("two models are named '" + name + "'; name them apart in a --models FILE.json (\"name\")");
    models_.push_back(load_model(spec, translation, summarization));
  }
}

ModelSet::ModelSet(std::vector<std::shared_ptr<const ServedModel>> models) {
  if (models.empty()) throw Error("no model to serve");
  for (auto& m : models) {
    if (by_name(m->name))
      throw Error("two models are named '" + m->name + "'; name them apart in a --models FILE.json (\"name\")");
    models_.push_back(std::move(m));
  }
}

const ServedModel* ModelSet::by_name(const std::string& name) const {
  for (const auto& m : models_)
    if (m->name == name) return m.get();
  return nullptr;
}

std::vector<const ServedModel*> ModelSet::of_task(Task task) const {
  std::vector<const ServedModel*> out;
  for (const auto& m : models_)
    if (m->task == task) out.push_back(m.get());
  return out;
}

const ServedModel* ModelSet::for_pair(const std::string& source, const std::string& target) const {
  for (const auto& m : models_) {
    if (m->task != Task::kTranslate) continue;
    if (m->multilingual()) {
      const std::string s = m->model_code(source), t = m->model_code(target);
      if (!s.empty() && !t.empty() && s != t) return m.get();
    } else if (m->source_lang == source && m->target_lang == target) {
      return m.get();
    }
  }
  return nullptr;
}

std::vector<std::string> ModelSet::sources_for(const std::string& target) const {
  std::vector<std::string> out;
  const auto add = [&](const std::string& code) {
    if (std::find(out.begin(), out.end(), code) == out.end()) out.push_back(code);
  };
  for (const auto& m : models_) {
    if (m->task != Task::kTranslate) continue;
    if (m->multilingual()) {
      const std::string t = m->model_code(target);
      if (t.empty()) continue;
      for (const std::string& code : m->languages)
        if (m->model_code(code) != t) add(code);
    } else if (m->target_lang == target) {
      add(m->source_lang);
    }
  }
  return out;
}

std::vector<std::string> ModelSet::source_languages() const {
  std::vector<std::string> out;
  for (const auto& entry : languages_json())
    if (!entry["targets"].empty()) out.push_back(entry["code"].get<std::string>());
  return out;
}

bool ModelSet::serves_language(const std::string& code) const {
  for (const auto& m : models_) {
    if (m->task != Task::kTranslate) continue;
    if (m->multilingual() ? !m->model_code(code).empty() : (m->source_lang == code || m->target_lang == code))
      return true;
  }
  return false;
}

nlohmann::json ModelSet::languages_json() const {
  // Every language some translation model reads or writes, with the targets reachable from it.
  std::vector<std::string> codes;
  std::map<std::string, std::set<std::string>> targets;
  const auto add = [&](const std::string& code) {
    if (std::find(codes.begin(), codes.end(), code) == codes.end()) codes.push_back(code);
  };
  for (const auto& m : models_) {
    if (m->task != Task::kTranslate) continue;
    if (m->multilingual()) {
      for (const std::string& s : m->languages) {
        add(s);
        for (const std::string& t : m->languages)
          if (t != s) targets[s].insert(t);
      }
    } else {
      add(m->source_lang);
      add(m->target_lang);
      targets[m->source_lang].insert(m->target_lang);
    }
  }
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& code : codes) {
    const auto& t = targets[code];
    out.push_back(
        {{"code", code}, {"name", language_name(code)}, {"targets", std::vector<std::string>(t.begin(), t.end())}});
  }
  return out;
}

std::string ModelSet::language_list() const {
  std::vector<std::string> codes;
  for (const auto& entry : languages_json()) codes.push_back(entry["code"].get<std::string>());
  return join(codes, 40);
}

std::string ModelSet::model_list(Task task) const {
  std::vector<std::string> names;
  for (const ServedModel* m : of_task(task)) names.push_back(m->name);
  return names.empty() ? "none" : join(names);
}

std::string ModelSet::pair_list(size_t limit) const {
  std::vector<std::string> pairs;
  for (const auto& m : models_) {
    if (m->task != Task::kTranslate) continue;
    if (m->multilingual())
      pairs.push_back("any pair of " + std::to_string(m->languages.size()) + " languages (" + m->name + ")");
    else
      pairs.push_back(m->source_lang + "->" + m->target_lang);
  }
  return join(pairs, limit);
}

nlohmann::json ModelSet::models_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : models_) {
    nlohmann::json entry = {{"name", m->name},
                            {"task", task_name(m->task)},
                            {"model_type", m->model_type},
                            {"folder", base_name(m->dir)},  // the folder's name only: no server paths to clients
                            {"compute_type", compute_type_name(m->options.compute_type)},
                            {"threads", m->options.threads}};
    if (m->recognizer) {  // the languages it hears; translate: any of them into English
      entry["languages"] = m->recognizer->languages();
      entry["multilingual"] = m->recognizer->multilingual();
    } else if (m->multilingual()) {
      entry["default_beam_size"] = m->default_beam;
      entry["languages"] = m->languages;
    } else {
      entry["default_beam_size"] = m->default_beam;
      entry["source"] = m->source_lang;
      entry["target"] = m->target_lang;
    }
    out.push_back(entry);
  }
  return out;
}

nlohmann::json ModelSet::openai_models_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& m : models_)
    out.push_back({{"id", m->name}, {"object", "model"}, {"created", m->created}, {"owned_by", "ordo"}});
  return out;
}

const ServedModel* ModelSet::speech_model(const std::string& name) const {
  if (const ServedModel* m = by_name(name)) return m->task == Task::kTranscribe ? m : nullptr;
  const std::vector<const ServedModel*> speech = of_task(Task::kTranscribe);
  return (name.empty() || name == "whisper-1") && !speech.empty() ? speech.front() : nullptr;
}

}  // namespace ordo::server
