// ordo-lead: the lead baseline for summarization, the first N lines (dialogue turns) of each
// document, joined by spaces, one per output line.
//   ordo-lead --input dialogsum.dev.jsonl#dialogue --lines 2 > lead2.txt
//   ordo-evaluate --hyp lead2.txt --ref dev.summaries.txt --metrics rouge
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

int main(int argc, char** argv) {
  CLI::App app{"ordo-lead: lead-N baseline (first N lines of each document)"};
  std::string input;
  int lines = 3;
  app.add_option("--input", input,
                 "FILE.jsonl#FIELD (a JSON-lines field) or a text file of documents with "
                 "literal \\n between lines")
      ->required();
  app.add_option("--lines", lines, "How many leading lines (turns) to keep")->check(CLI::Range(1, 1000));
  CLI11_PARSE(app, argc, argv);
  const size_t hash = input.rfind('#');
  const std::string path = hash == std::string::npos ? input : input.substr(0, hash);
  const std::string field = hash == std::string::npos ? "" : input.substr(hash + 1);
  std::ifstream in(path);
  if (!in) {
    std::cerr << "ordo-lead: error: " << path << ": cannot open\n";
    return 1;
  }
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    std::string document = line;
    if (!field.empty()) {
      try {
        const auto json = nlohmann::json::parse(line);
        document = json.at(field).get<std::string>();
      } catch (const std::exception& e) {
        std::cerr << "ordo-lead: error: " << path << " line " << number << ": " << e.what() << "\n";
        return 1;
      }
    } else {
      for (size_t p = document.find("\\n"); p != std::string::npos; p = document.find("\\n", p + 1))
        document.replace(p, 2, "\n");
    }
    std::istringstream turns(document);
    std::string turn, lead;
    for (int k = 0; k < lines && std::getline(turns, turn); ++k) lead += (k ? " " : "") + turn;
    std::cout << lead << "\n";
  }
  return 0;
}
