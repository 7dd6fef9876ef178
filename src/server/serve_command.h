// `ordo serve`'s options: read here into a ServerConfig and run (server.h); the module's entry
// point is serve_main.cpp.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ordo/options.h"

namespace ordo::server {

struct ServeArgs {
  std::vector<std::string> models;  // NAME | DIR | SRC:TGT=DIR
  std::string models_file;
  std::string host = "127.0.0.1";
  int port = 5000;
  ModelOptions model_options;  // the flags of the table of model options: threads in all,
                               // inter_threads = batches run at once
  bool no_weight_cache = false;
  BatchOptions batching;  // the flags of the table of batching options: the most per batch
  double batch_wait_ms = 5;
  double idle_release = 30;  // --idle-release: seconds without a batch before memory is returned
  size_t max_body_bytes = 1 << 20;
  size_t max_file_bytes = 20 << 20;
  size_t max_chars = 10000;
  size_t max_texts = 256;
  size_t max_queue = 4096;
  double timeout = 60;
  int max_beam_size = 16;
  size_t max_request_cost = size_t(1) << 18;
  size_t max_attention_values = size_t(1) << 24;
  double read_timeout = 10;
  size_t max_client_connections = 256;
  std::string api_keys_file;
  std::string admin_key_file;      // --admin-key: POST /admin/reload
  std::string access_log;          // --access-log FILE ("-": stderr, "off": none)
  bool log_text = false;           // --log-text
  double key_window_seconds = 60;  // hidden --key-window-seconds: req_limit's window (tests)
  std::vector<std::string> cors_origins;
  int http_threads = 128;
  bool no_page = false;  // --no-page: no GET / (API only)
  // Files (POST /translate_file, DeepL's /v2/document): server_config.h's FileServing.
  double file_ttl = 3600;
  size_t max_stored_files = 64;
  size_t max_stored_file_bytes = size_t(256) << 20;
  double file_timeout = 600;
  size_t file_workers = 1;
  // Speech (POST /v1/audio/*): server_config.h's SpeechServing.
  size_t max_audio_bytes = size_t(25) << 20;
  double max_audio_seconds = 2 * 3600.0;
  std::string translation_preset = "translation", summarization_preset = "summarization";
};

CLI::App* add_serve_command(CLI::App& app, ServeArgs& args);
// Serves until SIGTERM/SIGINT; returns the exit code. Throws ordo::Error.
int run_serve(const ServeArgs& args);

}  // namespace ordo::server
