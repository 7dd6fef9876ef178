// libFuzzer harness: what `ordo serve` parses from a client (src/server/request_fields.*,
// ordo::SentenceLayout): the body as JSON and as a urlencoded form, the fields the endpoints read
// (q, source, target, format, alternatives, api_key and every decoding option), and the text
// cut into sentences as format=text and format=html (ordo::HtmlDocument, Gumbo) do, then
// rebuilt (HTML with and without word alignments); and the body as the bytes of a connection,
// whose request head (server/request_head.h) frames a request or is refused with a status.
// Refusal must be an ApiError (answered with its status) or an ordo::Error; an unchanged text
// must rebuild byte for byte; a framed head must end where its blank line does. And the
// language of the body (server/language_detect.h, CLD2): any bytes are detected or not, safely.
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "ordo/document.h"
#include "ordo/error.h"
#include "ordo/text.h"
#include "server/language_detect.h"
#include "server/request_fields.h"
#include "server/request_head.h"

namespace {

void read_fields(const ordo::server::RequestFields& fields) {
  using ordo::server::ApiError;
  try {
    bool is_list = false;
    (void)fields.texts("q", is_list);
    (void)fields.string("source");
    (void)fields.string("target");
    (void)fields.string("format");
    (void)fields.string("api_key");
    (void)fields.integer("alternatives", 0, 7);
    (void)fields.names();
  } catch (const ApiError&) {
  }
  try {
    (void)ordo::server::decode_options(fields, 8, 1024);
  } catch (const ApiError&) {
  } catch (const ordo::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  using ordo::server::ApiError;
  using ordo::server::RequestFields;
  try {
    read_fields(RequestFields::from_json(body));
  } catch (const ApiError&) {
  }
  try {
    read_fields(RequestFields::from_urlencoded(body));
  } catch (const ApiError&) {
  }
  (void)ordo::server::utf8_length(body);
  (void)ordo::server::shown(body);

  // The body as a connection's bytes: a head framed, refused with a known status, or not whole yet.
  {
    const ordo::server::RequestHead head = ordo::server::parse_request_head(body, 4096, 65536);
    if (head.status != 0) {
      if (head.status != 400 && head.status != 413 && head.status != 431 && head.status != 501)
        ordo::fuzz::fail("request head refused with an unexpected status");
      if (head.error.empty()) ordo::fuzz::fail("request head refused without a message");
    } else if (head.head_bytes != 0) {
      if (head.head_bytes > body.size() || head.head_bytes > 4096 ||
          body.compare(head.head_bytes - 4, 4, "\r\n\r\n") != 0 || body.find("\r\n\r\n") + 4 != head.head_bytes)
        ordo::fuzz::fail("request head framed at the wrong place");
      if (head.body_bytes > 65536) ordo::fuzz::fail("request body past the limit accepted");
      if (head.chunked) {
        const ordo::server::ChunkedBody chunked = ordo::server::chunked_body_end(body, head.head_bytes, 65536);
        if (chunked.status != 0 && ((chunked.status != 400 && chunked.status != 413) || chunked.error.empty()))
          ordo::fuzz::fail("chunked body refused with an unexpected status or no message");
        if (chunked.end != 0 && (chunked.end > body.size() || chunked.end < head.head_bytes + 5 ||
                                 body.compare(chunked.end - 2, 2, "\r\n") != 0))
          ordo::fuzz::fail("chunked body framed at the wrong place");
      }
    } else if (body.size() > 4096 || body.find("\r\n\r\n") != std::string::npos) {
      ordo::fuzz::fail("a whole or oversized head taken as not whole yet");
    }
  }

  // The body as a text to translate. The server refuses invalid UTF-8 before this (and only
  // invalid UTF-8 can keep ICU from breaking at a lone CR, which a sentence run turns into a
  // space as it does line breaks), so only valid UTF-8 must rebuild byte for byte.
  try {
    ordo::check_utf8(body, "fuzz input");
    const ordo::SentenceLayout text(body, "en", ordo::LineBreaks::kEndLine);
    if (text.rebuild(text.sentences()) != body) ordo::fuzz::fail("format=text does not rebuild an unchanged text");
  } catch (const ordo::Error&) {
  }
  try {
    if (ordo::server::html_tag_count(body) <= ordo::server::kMaxHtmlTags) {
      const ordo::HtmlDocument html(body, "de");
      std::vector<ordo::AlignedTranslation> plain, aligned;
      for (const std::string& sentence : html.sentences()) {
        plain.push_back({sentence + " <&>", {}, 0, 0});
        // Every word linked to the reverse word, and one link out of range.
        ordo::AlignedTranslation reversed{sentence, {}, 0, 0};
        int64_t words = 1;
        for (char c : sentence) words += c == ' ';
        for (int64_t w = 0; w < words; ++w) reversed.words.push_back({w, words - 1 - w});
        reversed.words.push_back({words + 3, 0});
        reversed.source_words = reversed.target_words = words;
        aligned.push_back(std::move(reversed));
      }
      (void)html.rebuild(plain);
      (void)html.rebuild(aligned);
      (void)html.rebuild({});
    }
  } catch (const ordo::Error&) {
  }

  // The body as a text whose language POST /detect and source "auto" detect (CLD2): any bytes,
  // as plain text and as HTML, give an answer among the candidates and never more than three.
  for (const bool html : {false, true}) {
    const ordo::server::Detection d =
        ordo::server::detect_language(body, {"en", "de", "deu_Latn", "zh", "he", "nb"}, html);
    if (d.languages.size() > 3) ordo::fuzz::fail("more than three detected languages");
    for (const ordo::server::DetectedLanguage& l : d.languages)
      if (l.confidence < 0 || l.confidence > 100) ordo::fuzz::fail("a confidence outside 0-100");
  }
  return 0;
}
