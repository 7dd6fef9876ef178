// What the file-format tests (tests/files/*_test.cpp) share, in one copy so that they cannot
// drift apart: the fixtures in tests/data/files/, made-up translations that show where each word
// went (upper-cased, or with the words reversed and the word links that say so, or "shouted"
// around a fragment's markup), a file translated through ordo::FileDocument or a reader's
// FileContent::rebuild, the parts of a zip archive, and the real tools (msgfmt,
// translate-toolkit, python) run on an output to read it back.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "document/file_content.h"
#include "document/zip_archive.h"
#include "ordo/files.h"
#include "support/errors.h"

namespace ordo::testing {

// The bytes of tests/data/files/`name`.
inline std::string data_file(const std::string& name) {
  std::ifstream in(std::string(ORDO_TEST_DATA_DIR) + "/files/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Whether `text` has `part` in it (the message says what it has otherwise).
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

inline FileOptions to(const std::string& target_language) {
  FileOptions options;
  options.target_language = target_language;
  return options;
}

// ---------------------------------------------------------------- through ordo::FileDocument

inline std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

// The sentence upper-cased, or with its words in reverse order, each word linked to itself.
inline AlignedTranslation made_up(const std::string& sentence, bool reverse) {
  std::vector<std::string> words = words_of(sentence);
  const int n = static_cast<int>(words.size());
  AlignedTranslation out;
  if (reverse) std::reverse(words.begin(), words.end());
  for (int i = 0; i < n; ++i) {
    std::string word = words[i];
    std::transform(word.begin(), word.end(), word.begin(), [](unsigned char c) { return std::toupper(c); });
    out.text += (i ? " " : "") + word;
    out.words.push_back({reverse ? n - 1 - i : i, i});
  }
  out.source_words = out.target_words = n;
  return out;
}

// `bytes` through ordo::FileDocument, each sentence made_up(). ORDO_FILES_TEST_OUT=dir keeps
// each output (out-N.ext) for opening in LibreOffice or a reader.
inline std::string translate(const std::string& bytes, FileFormat format, bool reverse = false,
                             const FileOptions& options = {}) {
  FileDocument document(bytes, format, options);
  std::vector<AlignedTranslation> translations;
  for (const std::string& sentence : document.sentences()) translations.push_back(made_up(sentence, reverse));
  const std::string out = document.rebuild(translations);
  if (const char* dir = std::getenv("ORDO_FILES_TEST_OUT")) {
    static int written = 0;
    std::ofstream(std::string(dir) + "/out-" + std::to_string(++written) + file_format_info(format).extensions[0],
                  std::ios::binary)
        << out;
  }
  return out;
}

// `bytes` through ordo::FileDocument, each sentence given back as it was (no word links).
inline std::string given_back(const std::string& bytes, FileFormat format, const FileOptions& options = {}) {
  FileDocument document(bytes, format, options);
  std::vector<AlignedTranslation> same;
  for (const std::string& sentence : document.sentences()) same.push_back({sentence, {}, 0, 0});
  return document.rebuild(same);
}

// The message of the ordo::Error that reading `bytes` as a `format` file throws.
inline std::string error_of_reading(const std::string& bytes, FileFormat format) {
  return error_of([&] { FileDocument document(bytes, format); });
}

// ---------------------------------------------------------------- through a reader's units

// Upper case outside tags and entities: a "translation" that keeps a fragment's markup and
// points.
inline std::string shout(const std::string& text) {
  std::string out;
  bool tag = false, entity = false;
  for (char c : text) {
    if (c == '<') tag = true;
    if (c == '&') entity = true;
    out += tag || entity ? c : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (c == '>') tag = false;
    if (c == ';' || c == ' ') entity = false;
  }
  return out;
}

// Each unit's text shouted.
inline std::vector<std::string> shouted_units(const document::FileContent& content) {
  std::vector<std::string> out;
  for (const document::Unit& unit : content.units) out.push_back(shout(unit.text));
  return out;
}

// The file rebuilt with each unit shouted.
inline std::string shouted(const document::FileContent& content) { return content.rebuild(shouted_units(content)); }

// ---------------------------------------------------------------- zip archives

inline std::string part_of(const std::string& archive, const std::string& name) {
  document::ZipArchive zip(archive, FileLimits{}, "test file");
  return zip.read(name);
}

// `archive` with part `name` replaced by `bytes` (or added).
inline std::string with_part(const std::string& archive, const std::string& name, const std::string& bytes) {
  document::ZipArchive zip(archive, FileLimits{}, "test file");
  zip.replace(name, bytes);
  return zip.write();
}

// ---------------------------------------------------------------- tools that read an output back

inline bool succeeds(const std::string& command) { return std::system((command + " >/dev/null 2>&1").c_str()) == 0; }

inline bool installed(const std::string& tool) { return succeeds("command -v " + tool); }

// Runs `command`: its exit status and what it wrote to stdout and stderr.
inline std::pair<int, std::string> run(const std::string& command) {
  std::string said;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return {-1, "popen failed"};
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) said.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, said};
}

// The (location, msgid, msgstr) of each entry a translate-toolkit converter (json2po, sub2po)
// wrote, strings as written (escapes kept, continued lines joined).
inline std::vector<std::vector<std::string>> po_entries(const std::string& po) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(po);
  const auto quoted = [](const std::string& s) { return s.substr(s.find('"') + 1, s.rfind('"') - s.find('"') - 1); };
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#: ", 0) == 0) out.push_back({line.substr(3)});
    if (out.empty()) continue;
    if (line.rfind("msgid ", 0) == 0 || line.rfind("msgstr ", 0) == 0) out.back().push_back(quoted(line));
    if (line.rfind("\"", 0) == 0) out.back().back() += quoted(line);
  }
  return out;
}

}  // namespace ordo::testing
