// Reloading the models without downtime (SIGHUP, POST /admin/reload; service.h): the models
// are read again, the new and changed ones load beside the served ones while requests go on,
// then one atomic swap makes new requests use the new set. A request that began before keeps
// the set it read (Service::pin_models), and a batch keeps its Translator (a shared_ptr in its
// TranslateFn), so requests in flight finish on the old model; a removed model's memory is
// returned once its last request and batch are done (reap_unloaded).
#include <malloc.h>

#include <cmath>

#include "server/service.h"

namespace ordo::server {

Json Service::reload(const std::string& trigger) {
  std::lock_guard<std::mutex> lock(reload_mutex_);
  const auto started = Clock::now();
  Json loaded = Json::array(), kept = Json::array(), unloading = Json::array(), errors = Json::array();
  const auto finish = [&](const std::string& result) {
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    metrics_.reload(result);
    Json report = {{"result", result},
                   {"trigger", trigger},
                   {"loaded", loaded},
                   {"kept", kept},
                   {"unloading", unloading},
                   {"errors", errors},
                   {"seconds", std::round(seconds * 1000) / 1000}};
    std::string line = "ordo serve: reload (" + trigger + "): " + result;
    const auto names = [](const Json& list) {
      std::vector<std::string> out;
      for (const Json& n : list) out.push_back(n.get<std::string>());
      return join(out);
    };
    if (!loaded.empty()) line += "; loaded " + names(loaded);
    if (!kept.empty()) line += "; kept " + names(kept);
    if (!unloading.empty()) line += "; removed " + names(unloading);
    for (const Json& e : errors)
      line += "; " + e["error"].get<std::string>() +  // a load error names its model
              (e.value("serving", "") == "old" ? " (the old one keeps serving)" : "");
    stderr_line(line);
    return report;
  };

  std::vector<ModelSpec> specs;
  try {
    specs = config_.reread_models ? config_.reread_models() : config_.models;
    if (specs.empty()) throw Error("no model to serve");
  } catch (const std::exception& e) {
    errors.push_back(Json{{"model", ""}, {"error", e.what()}, {"serving", "old"}});
    return finish("failed");
  }
  const std::shared_ptr<ModelEpoch> current = std::atomic_load(&epoch_);
  if (!current) {
    errors.push_back(Json{{"model", ""}, {"error", "the models are still loading; nothing reloaded"}});
    return finish("failed");
  }
  const ModelSet& old = *current->set;
  const auto old_model = [&](const std::string& name) -> std::shared_ptr<const ServedModel> {
    for (const auto& m : old.models())
      if (m->name == name) return m;
    return nullptr;
  };
  std::vector<std::shared_ptr<const ServedModel>> next;
  std::set<std::string> names;
  for (const ModelSpec& spec : specs) {
    const std::string name = spec.name.empty() ? spec.dir : spec.name;
    const std::shared_ptr<const ServedModel> before = old_model(name);
    if (!names.insert(name).second) {
      errors.push_back(
          Json{{"model", name}, {"error", "two models are named '" + name + "'; the first one is served"}});
      metrics_.model_load_error(name);
      continue;
    }
    if (before && same_spec(before->spec, spec) && before->fingerprint == folder_fingerprint(spec.dir)) {
      next.push_back(before);
      kept.push_back(name);
      continue;
    }
    try {
      next.push_back(load_model(spec, config_.translation_preset, config_.summarization_preset));
      loaded.push_back(name);
    } catch (const std::exception& e) {
      metrics_.model_load_error(name);
      std::string what = e.what();
      if (what.rfind("model '", 0) != 0) what = "model '" + name + "': " + what;
      errors.push_back(Json{{"model", name}, {"error", what}, {"serving", before ? "old" : "none"}});
      if (before) {
        next.push_back(before);
        kept.push_back(name);
      }
    }
  }
  std::shared_ptr<const ModelSet> set;
  try {
    set = std::make_shared<const ModelSet>(next);
  } catch (const std::exception& e) {
    errors.push_back(Json{{"model", ""}, {"error", e.what()}, {"serving", "old"}});
    loaded = Json::array();
    kept = Json::array();
    return finish("failed");
  }
  for (const auto& m : old.models())
    if (std::find(next.begin(), next.end(), m) == next.end()) {
      // Removed, or replaced by a new load of its name: freed when its requests are done.
      unloading_.emplace_back(m->name, m);
      if (!names.count(m->name)) unloading.push_back(m->name);
    }
  auto epoch = std::make_shared<ModelEpoch>();
  epoch->set = set;
  current->next = epoch;  // requests that pinned the old set keep this one too
  std::atomic_store(&epoch_, epoch);
  metrics_.models_served(set->models().size());
  return finish(errors.empty() ? "ok" : "failed");
}

void Service::reap_unloaded() {
  std::vector<std::string> freed;
  {
    std::lock_guard<std::mutex> lock(reload_mutex_);
    for (auto it = unloading_.begin(); it != unloading_.end();) {
      if (it->second.expired()) {
        freed.push_back(it->first);
        it = unloading_.erase(it);
      } else {
        ++it;
      }
    }
  }
  if (freed.empty()) return;
  ::malloc_trim(0);  // the weights came from the heap (ordo::configure_process): give them back
  stderr_line("ordo serve: unloaded " + join(freed) + " (its memory returned)");
}

}  // namespace ordo::server
