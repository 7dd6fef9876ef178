// Files through `ordo serve` as LibreTranslate's clients send them (the real binary on
// 127.0.0.1, an ephemeral port, the bundled en-de): POST /translate_file with a multipart
// upload answers a download URL, GET /download_file serves the translated file as an
// attachment until its time limit and 404 after; a file of an unknown type or not of its
// type is a 400; /frontend/settings lists the formats. Every wait is bounded.
// ctest-label: integration
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "server/en_de_suite.h"

namespace {

using nlohmann::json;
using namespace ordo::testing;

const std::string kText = "A man is riding a bicycle down the street.\nTwo dogs play in the snow.\n";

// The upload LibreTranslate's page makes (FormData: file, source, target, api_key).
Answer upload(const ServerProcess& server, const std::string& name, const std::string& bytes,
              const std::string& source = "en", const std::string& target = "de", const std::string& key = "") {
  const httplib::MultipartFormDataItems items = {{"file", bytes, name, "application/octet-stream"},
                                                 {"source", source, "", ""},
                                                 {"target", target, "", ""},
                                                 {"api_key", key, "", ""}};
  return answer_of(server.client(120)->Post("/translate_file", items));
}

// The path of a translatedFileUrl on `server` ("" when it is not one of its URLs).
std::string download_path(const ServerProcess& server, const json& body) {
  if (!body.contains("translatedFileUrl")) return "";
  const std::string url = body["translatedFileUrl"];
  const std::string prefix = "http://127.0.0.1:" + std::to_string(server.port());
  if (url.rfind(prefix, 0) != 0) return "";
  return url.substr(prefix.size());
}

class ServeFiles : public EnDeSuite {
 protected:
  // What POST /translate answers for each line of kText.
  static std::vector<std::string> translated_lines() {
    return libre_translated({"A man is riding a bicycle down the street.", "Two dogs play in the snow."});
  }
};

TEST_F(ServeFiles, ATextFileIsTranslatedLineByLineAndDownloadedAsAnAttachment) {
  const Answer answer = upload(*server_, "hello.txt", kText);
  ASSERT_EQ(answer.status, 200) << answer.text;
  const std::string path = download_path(*server_, answer.body);
  ASSERT_FALSE(path.empty()) << answer.text;
  EXPECT_EQ(path.substr(path.size() - 10), ".hello.txt") << path;
  const Answer file = answer_of(server_->client()->Get(path.c_str()));
  ASSERT_EQ(file.status, 200) << file.text;
  EXPECT_NE(file.header("Content-Disposition").find("attachment; filename=\"hello.txt\""), std::string::npos)
      << file.header("Content-Disposition");
  EXPECT_EQ(file.header("Content-Type").rfind("text/plain", 0), 0u) << file.header("Content-Type");
  const std::vector<std::string> lines = translated_lines();
  EXPECT_EQ(file.text, lines[0] + "\n" + lines[1] + "\n");
}

TEST_F(ServeFiles, TheSourceAutoIsDetectedFromTheFile) {
  const Answer answer = upload(*server_, "auto.txt", kText, "auto");
  ASSERT_EQ(answer.status, 200) << answer.text;
  const Answer file = answer_of(server_->client()->Get(download_path(*server_, answer.body).c_str()));
  ASSERT_EQ(file.status, 200) << file.text;
  EXPECT_NE(file.text.find("Hunde"), std::string::npos) << file.text;
}

TEST_F(ServeFiles, AFileNameWithSpacesAndAccentsComesBackAsItWas) {
  const Answer answer = upload(*server_, "Bericht für Anna.txt", kText);
  ASSERT_EQ(answer.status, 200) << answer.text;
  const std::string path = download_path(*server_, answer.body);
  EXPECT_EQ(path.find(' '), std::string::npos) << path;  // percent-encoded in the URL
  const Answer file = answer_of(server_->client()->Get(path.c_str()));
  ASSERT_EQ(file.status, 200) << file.text << " " << path;
  // Percent-encoded (RFC 6266); httplib's client decodes header values as it reads them.
  const std::string disposition = file.header("Content-Disposition");
  EXPECT_TRUE(disposition.find("filename*=UTF-8''Bericht%20f%C3%BCr%20Anna.txt") != std::string::npos ||
              disposition.find("filename*=UTF-8''Bericht für Anna.txt") != std::string::npos)
      << disposition;
}

TEST_F(ServeFiles, AFileOfAnUnknownTypeIsA400NamingItsExtensionAndTheSupportedOnes) {
  const Answer answer = upload(*server_, "notes.xyz", kText);
  EXPECT_EQ(answer.status, 400);
  const std::string error = answer.body.value("error", "");
  EXPECT_NE(error.find(".xyz"), std::string::npos) << error;
  EXPECT_NE(error.find(".docx"), std::string::npos) << error;
  EXPECT_NE(error.find(".txt"), std::string::npos) << error;
}

TEST_F(ServeFiles, AFileThatIsNotWhatItsExtensionSaysIsA400) {
  const Answer answer = upload(*server_, "report.docx", "this is not a zip archive");
  EXPECT_EQ(answer.status, 400) << answer.text;
  EXPECT_EQ(answer.body.value("error", "").rfind("Invalid request: ", 0), 0u) << answer.text;
}

TEST_F(ServeFiles, AnUploadWithoutAFileOrLanguagesIsA400NamingWhatIsMissing) {
  const httplib::MultipartFormDataItems no_file = {{"source", "en", "", ""}, {"target", "de", "", ""}};
  const Answer a = answer_of(server_->client()->Post("/translate_file", no_file));
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body.value("error", ""), "Invalid request: missing file parameter");
  const Answer b = upload(*server_, "hello.txt", kText, "");
  EXPECT_EQ(b.status, 400);
  EXPECT_EQ(b.body.value("error", ""), "Invalid request: missing source parameter");
  const Answer c = answer_of(server_->client()->Post("/translate_file", "{}", "application/json"));
  EXPECT_EQ(c.status, 400);
  EXPECT_NE(c.body.value("error", "").find("multipart/form-data"), std::string::npos) << c.text;
}

TEST_F(ServeFiles, AnUnservedTargetIsA400) {
  const Answer answer = upload(*server_, "hello.txt", kText, "en", "fr");
  EXPECT_EQ(answer.status, 400) << answer.text;
  EXPECT_NE(answer.body.value("error", "").find("fr"), std::string::npos) << answer.text;
}

TEST_F(ServeFiles, AnUnknownDownloadIsA404) {
  const Answer a = answer_of(server_->client()->Get("/download_file/0123456789abcdef0123456789abcdef.hello.txt"));
  EXPECT_EQ(a.status, 404);
  const Answer answer = upload(*server_, "hello.txt", kText);
  ASSERT_EQ(answer.status, 200) << answer.text;
  std::string path = download_path(*server_, answer.body);
  path.replace(path.size() - 9, 9, "other.txt");  // the right id, another name
  EXPECT_EQ(answer_of(server_->client()->Get(path.c_str())).status, 404) << path;
}

TEST_F(ServeFiles, FrontendSettingsListTheFileFormats) {
  const Answer a = answer_of(server_->client()->Get("/frontend/settings"));
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(a.body["filesTranslation"], true);
  const auto formats = a.body["supportedFilesFormat"].get<std::vector<std::string>>();
  for (const char* extension : {".txt", ".docx", ".pptx", ".xlsx", ".odt", ".epub", ".srt", ".po", ".html"})
    EXPECT_NE(std::find(formats.begin(), formats.end(), extension), formats.end()) << extension;
}

TEST_F(ServeFiles, AWordDocumentIsTranslatedAndStaysAWordDocument) {
  const std::string path = data_dir() + "/files/report.docx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not there yet";
  const Answer answer = upload(*server_, "report.docx", file_bytes(path));
  ASSERT_EQ(answer.status, 200) << answer.text;
  const Answer file = answer_of(server_->client()->Get(download_path(*server_, answer.body).c_str()));
  ASSERT_EQ(file.status, 200) << file.text;
  EXPECT_EQ(file.text.substr(0, 2), "PK");  // a zip archive
  EXPECT_EQ(file.header("Content-Type"), "application/vnd.openxmlformats-officedocument.wordprocessingml.document");
}

TEST(ServeFilesKept, ADownloadAfterTheTimeLimitIsA404) {
  ServerProcess server(en_de_args("1", {"--file-ttl", "1"}));
  const Answer answer = upload(server, "hello.txt", kText);
  ASSERT_EQ(answer.status, 200) << answer.text;
  const std::string path = download_path(server, answer.body);
  // Polled, bounded: 200 until the second has passed, then 404 for good.
  int last = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    last = answer_of(server.client()->Get(path.c_str())).status;
    if (last != 200) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(last, 404);
}

TEST(ServeFilesKept, WithKeysAnUploadNeedsOneAndCountsTheFilesCharacters) {
  TempDir dir;
  const std::string keys = dir.write("keys.txt", "k-files name=files char_limit=20\nk-big name=big\n");
  ServerProcess server(en_de_args("1", {"--api-keys", keys}));
  EXPECT_EQ(upload(server, "hello.txt", kText).status, 403);
  EXPECT_EQ(upload(server, "hello.txt", kText, "en", "de", "wrong").status, 403);
  const Answer over = upload(server, "hello.txt", kText, "en", "de", "k-files");
  EXPECT_EQ(over.status, 400) << over.text;  // the file has more than the key's 20 characters
  EXPECT_NE(over.body.value("error", "").find("(20)"), std::string::npos) << over.text;
  EXPECT_EQ(upload(server, "hello.txt", kText, "en", "de", "k-big").status, 200);
}

TEST(ServeFilesKept, AFileLargerThanTheFileLimitIsA413) {
  ServerProcess server(en_de_args("1", {"--max-file-bytes", "4096"}));
  const Answer answer = upload(server, "big.txt", std::string(8000, 'a'));
  EXPECT_EQ(answer.status, 413) << answer.text;
}

TEST(ServeFilesKept, AFileLargerThanTheBodyLimitIsTakenWhileOtherRoutesKeepIt) {
  ServerProcess server(en_de_args("1", {"--max-body-bytes", "4096"}));
  std::string text;
  while (text.size() < 8000) text += "A man is riding a bicycle down the street.\n";
  const Answer answer = upload(server, "big.txt", text);
  EXPECT_EQ(answer.status, 200) << answer.text;
  httplib::Client client("127.0.0.1", server.port());
  const auto big = client.Post("/translate",
                               "{\"q\": \"" + std::string(8000, 'a') +
                                   "\", \"source\": \"en\", "
                                   "\"target\": \"de\"}",
                               "application/json");
  ASSERT_TRUE(big);
  EXPECT_EQ(big->status, 413);
}

}  // namespace
