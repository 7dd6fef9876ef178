// libFuzzer harness: HTML pages (ordo::HtmlDocument: the pre-scan and the memory-budgeted Gumbo
// parse of src/document/html_parse.*, then src/document/html_layout.cpp) on arbitrary bytes, with
// the default limits and with tight ones (so that the arena's bail-out path runs under the
// sanitizers too), and the page rebuilt from plain, reversed-alignment and missing translations.
// Anything but a result or an ordo::Error naming a limit is a finding; tools/ci/fuzz.sh runs it
// under -rss_limit_mb, so a parse whose memory grows past the limits is one too.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "ordo/document.h"
#include "ordo/error.h"

namespace {

void run(const std::string& page, const ordo::HtmlLimits& limits) {
  try {
    const ordo::HtmlDocument html(page, "en", limits);
    std::vector<ordo::AlignedTranslation> plain, reversed;
    for (const std::string& sentence : html.sentences()) {
      plain.push_back({sentence + " <&>", {}, 0, 0});
      ordo::AlignedTranslation r{sentence, {}, 0, 0};
      int64_t words = 1;
      for (char c : sentence) words += c == ' ';
      for (int64_t w = 0; w < words; ++w) r.words.push_back({w, words - 1 - w});
      r.words.push_back({words + 3, 0});
      r.source_words = r.target_words = words;
      reversed.push_back(std::move(r));
    }
    (void)html.rebuild(plain);
    (void)html.rebuild(reversed);
    (void)html.rebuild({});
  } catch (const ordo::Error& e) {
    if (std::string(e.what()).find("HTML input: ") != 0 && std::string(e.what()).find("UTF-8") == std::string::npos)
      ordo::fuzz::fail(std::string("an error that names no limit: ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string page(reinterpret_cast<const char*>(data), size);
  run(page, {});
  ordo::HtmlLimits tight;
  tight.max_depth = 16;
  tight.max_open_formatting = 4;
  tight.max_attributes = 4;
  tight.max_memory = 64 << 10;  // Gumbo runs out of its budget mid-parse: the longjmp path
  run(page, tight);
  return 0;
}
