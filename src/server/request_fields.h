// What a client sent: the fields of a JSON object or of a form (urlencoded or multipart), read
// with the field's name in every error, and the answer's error type. No HTTP library types.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ordo/option_table.h"
#include "ordo/options.h"

namespace ordo::server {

// An error answered to the client as {"error": message} with this HTTP status.
class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, int retry_after_seconds = 0)
      : std::runtime_error(message), status(status), retry_after(retry_after_seconds) {}
  int status;
  int retry_after;  // seconds, > 0: sent as Retry-After
};

// Start tags in `html`, counted cheaply, before an HtmlDocument is built (which enforces
// HtmlLimits itself, and frees its tree without recursion).
size_t html_tag_count(const std::string& html);
// The server refuses documents with more than kMaxHtmlTags start tags (html_tag_count),
// a request-size limit of its own beside the parser's HtmlLimits (src/document/html_parse.h).
constexpr size_t kMaxHtmlTags = 10000;

class RequestFields {
 public:
  // A JSON body: must be an object, nested at most kMaxJsonDepth deep. Throws ApiError 400
  // ("Invalid JSON format: ...") for any malformed body, a number beyond double range included.
  static RequestFields from_json(const std::string& body);
  // An application/x-www-form-urlencoded body. Throws ApiError 400 on bad %-escapes.
  static RequestFields from_urlencoded(const std::string& body);
  // Form fields already split (multipart/form-data); a repeated name keeps every value.
  static RequestFields from_form(std::multimap<std::string, std::string> fields);

  bool is_json() const { return is_json_; }
  bool has(const std::string& name) const;
  std::vector<std::string> names() const;

  // A text field; nullopt when absent (or JSON null). ApiError 400 naming the field otherwise.
  std::optional<std::string> string(const std::string& name) const;
  // One text or several: a JSON string or array of strings, a form field given once or repeated.
  // `is_list` tells which the client sent (the answer has the same shape).
  std::optional<std::vector<std::string>> texts(const std::string& name, bool& is_list) const;
  // Numbers and flags: JSON numbers/booleans, or their text in forms ("3", "true").
  std::optional<int64_t> integer(const std::string& name, int64_t min, int64_t max) const;
  std::optional<double> number(const std::string& name, double min, double max) const;
  std::optional<bool> boolean(const std::string& name) const;
  // An option of the table (ordo/option_table.h) from the field of its name, read as the table
  // reads a value (a form's text by the option's type), at most `max`; ApiError 400 naming the
  // field and what it accepts.
  void set(const DecodeOptionSpec& spec, DecodeOptions& options, double max) const;
  // A JSON object of strings ({"Vertrag": "contract"}), its pairs in key order; nullopt when
  // absent (or null). ApiError 400 naming the field for anything else, a form's field included.
  std::optional<std::vector<std::pair<std::string, std::string>>> string_map(const std::string& name) const;

 private:
  bool is_json_ = false;
  nlohmann::json json_;
  std::multimap<std::string, std::string> form_;
};

// ordo's own API (/v1/translate, /v1/summarize): every decoding option of the table
// (ordo/option_table.h) by its name, in the table's ranges; beams and n-best at most
// `max_beam`, lengths at most `max_tokens`.
// And "glossary", an object of source term: target term strings (DecodeOptions::glossary).
DecodeOptions decode_options(const RequestFields& fields, int max_beam, int max_tokens);
// The names decode_options() reads.
const std::vector<std::string>& decode_option_names();

// Deeper JSON nesting than any request needs is refused before it is built.
constexpr int kMaxJsonDepth = 32;

// A client's value as an error message shows it: control characters (NUL too) escaped as
// \u00XX, at most `max_chars` characters, then "..." (a 500 KB value is not echoed whole).
std::string shown(const std::string& value, size_t max_chars = 64);

// The characters of a UTF-8 text (code points), as clients count them.
size_t utf8_length(const std::string& text);

// Items as an error message lists them: "a, b, c"; with `limit`, the first `limit` and ", ...".
std::string join(const std::vector<std::string>& items, size_t limit = 0);

}  // namespace ordo::server
