// What the HTTP tests of LibreTranslate's files and of DeepL's API share: `ordo serve` of the
// bundled en-de (one for a whole suite, or one of a test's own), POST /translate's answer that
// their routes must equal, and a file's bytes to upload.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "server/server_process.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo::testing {

// `ordo serve`'s arguments for the bundled en-de on `threads` threads, then `more`.
inline std::vector<std::string> en_de_args(const std::string& threads, const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {"--model", std::string(ORDO_SOURCE_DIR) + "/models/en-de", "--threads", threads};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The bytes of the file at `path` ("" when it cannot be read).
inline std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A suite whose tests share one server of the bundled en-de on two threads (server_), started
// before its first test and stopped after its last. A suite that starts it with more arguments
// defines its own SetUpTestSuite() that calls start(); dir() holds the files it reads (keys).
class EnDeSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { start(); }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  static void start(const std::vector<std::string>& more = {}) { server_ = new ServerProcess(en_de_args("2", more)); }
  static TempDir& dir() {
    if (!dir_) dir_ = new TempDir();
    return *dir_;
  }
  // What POST /translate answers for `texts` from en to de (with api_key `key` unless "").
  static std::vector<std::string> libre_translated(const std::vector<std::string>& texts, const std::string& key = "") {
    nlohmann::json request = {{"q", texts}, {"source", "en"}, {"target", "de"}};
    if (!key.empty()) request["api_key"] = key;
    return answer_of(server_->client()->Post("/translate", request.dump(), "application/json"))
        .body["translatedText"]
        .get<std::vector<std::string>>();
  }

  static inline ServerProcess* server_ = nullptr;
  static inline TempDir* dir_ = nullptr;
};

}  // namespace ordo::testing
