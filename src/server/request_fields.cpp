#include "server/request_fields.h"

#include "ordo/glossary.h"
#include "ordo/option_table.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>

namespace ordo::server {
namespace {

ApiError bad_field(const std::string& name, const std::string& what) {
  return ApiError(400, "Invalid request: field '" + shown(name) + "' " + what);
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(const std::string& text, const std::string& where) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out += ' ';
    } else if (text[i] == '%') {
      const int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) throw ApiError(400, "Invalid request: malformed %-escape in form field " + where);
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string describe_range(int64_t min, int64_t max) {
  return "from " + std::to_string(min) + " to " + std::to_string(max);  // as the option tables say it
}

std::string number_text(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

RequestFields RequestFields::from_json(const std::string& body) {
  RequestFields f;
  f.is_json_ = true;
  try {
    f.json_ = nlohmann::json::parse(body, [](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
      if (depth > kMaxJsonDepth)
        throw ApiError(400, "Invalid JSON format: nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
      return true;
    });
  } catch (const nlohmann::json::exception& e) {
    // Any of nlohmann's errors (a parse error, a number beyond double range: out_of_range),
    // without its "[json.exception.<kind>.<id>] " prefix.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    if (what.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) what = what.substr(bracket + 2);
    throw ApiError(400, "Invalid JSON format: " + shown(what, 200));
  }
  if (!f.json_.is_object()) throw ApiError(400, "Invalid JSON format: the body must be a JSON object");
  return f;
}

RequestFields RequestFields::from_urlencoded(const std::string& body) {
  std::multimap<std::string, std::string> fields;
  size_t start = 0;
  while (start <= body.size()) {
    size_t end = body.find('&', start);
    if (end == std::string::npos) end = body.size();
    const std::string pair = body.substr(start, end - start);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      const std::string name = url_decode(pair.substr(0, eq), "name");
      const std::string value = eq == std::string::npos ? "" : url_decode(pair.substr(eq + 1), "'" + shown(name) + "'");
      fields.emplace(name, value);
    }
    start = end + 1;
  }
  return from_form(std::move(fields));
}

RequestFields RequestFields::from_form(std::multimap<std::string, std::string> fields) {
  RequestFields f;
  f.form_ = std::move(fields);
  return f;
}

bool RequestFields::has(const std::string& name) const {
  if (is_json_) return json_.contains(name) && !json_[name].is_null();
  return form_.count(name) > 0;
}

std::vector<std::string> RequestFields::names() const {
  std::vector<std::string> out;
  if (is_json_) {
    for (const auto& item : json_.items()) out.push_back(item.key());
  } else {
    for (const auto& [name, value] : form_)
      if (out.empty() || out.back() != name) out.push_back(name);
  }
  return out;
}

std::optional<std::string> RequestFields::string(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  if (is_json_) {
    const nlohmann::json& v = json_[name];
    if (!v.is_string()) throw bad_field(name, "must be a string");
    return v.get<std::string>();
  }
  return form_.find(name)->second;
}

std::optional<std::vector<std::pair<std::string, std::string>>> RequestFields::string_map(
    const std::string& name) const {
  if (!has(name)) return std::nullopt;
  const std::string must = "must be a JSON object of strings (e.g. {\"Vertrag\": \"contract\"})";
  if (!is_json_ || !json_[name].is_object()) throw bad_field(name, must);
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [key, value] : json_[name].items()) {
    if (!value.is_string()) throw bad_field(name, must + ": the value of " + shown(key) + " is " + value.type_name());
    out.emplace_back(key, value.get<std::string>());
  }
  return out;
}

std::optional<std::vector<std::string>> RequestFields::texts(const std::string& name, bool& is_list) const {
  if (!has(name)) return std::nullopt;
  std::vector<std::string> out;
  if (is_json_) {
    const nlohmann::json& v = json_[name];
    if (v.is_string()) {
      is_list = false;
      out.push_back(v.get<std::string>());
    } else if (v.is_array()) {
      is_list = true;
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_string())
          throw bad_field(name, "must be a string or an array of strings (element " + std::to_string(i) + " is " +
                                    v[i].type_name() + ")");
        out.push_back(v[i].get<std::string>());
      }
    } else {
      throw bad_field(name, std::string("must be a string or an array of strings, not ") + v.type_name());
    }
    return out;
  }
  const auto range = form_.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) out.push_back(it->second);
  is_list = out.size() > 1;
  return out;
}

std::optional<int64_t> RequestFields::integer(const std::string& name, int64_t min, int64_t max) const {
  if (!has(name)) return std::nullopt;
  const std::string must = "must be an integer " + describe_range(min, max);
  int64_t value = 0;
  if (is_json_) {
    const nlohmann::json& v = json_[name];
    if (v.is_number_integer()) {
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) throw bad_field(name, must);
      value = v.get<int64_t>();
    } else if (v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
               std::fabs(v.get<double>()) < 9e15) {
      value = static_cast<int64_t>(v.get<double>());
    } else {
      throw bad_field(name, must);
    }
  } else {
    const std::string& text = form_.find(name)->second;
    char* end = nullptr;
    errno = 0;
    const long long parsed = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0' || end != text.c_str() + text.size()) throw bad_field(name, must);
    value = parsed;
  }
  if (value < min || value > max) throw bad_field(name, must);
  return value;
}

std::optional<double> RequestFields::number(const std::string& name, double min, double max) const {
  if (!has(name)) return std::nullopt;
  const std::string must = "must be a number from " + number_text(min) + " to " + number_text(max);
  double value = 0;
  if (is_json_) {
    const nlohmann::json& v = json_[name];
    if (!v.is_number()) throw bad_field(name, must);
    value = v.get<double>();
  } else {
    const std::string& text = form_.find(name)->second;
    char* end = nullptr;
    errno = 0;
    value = std::strtod(text.c_str(), &end);
    if (text.empty() || errno != 0 || end != text.c_str() + text.size()) throw bad_field(name, must);
  }
  if (!std::isfinite(value) || value < min || value > max) throw bad_field(name, must);
  return value;
}

std::optional<bool> RequestFields::boolean(const std::string& name) const {
  if (!has(name)) return std::nullopt;
  if (is_json_) {
    const nlohmann::json& v = json_[name];
    if (!v.is_boolean()) throw bad_field(name, "must be true or false");
    return v.get<bool>();
  }
  const std::string& text = form_.find(name)->second;
  if (text == "true" || text == "1") return true;
  if (text == "false" || text == "0") return false;
  throw bad_field(name, "must be true or false");
}

void RequestFields::set(const DecodeOptionSpec& spec, DecodeOptions& options, double max) const {
  try {
    if (is_json_)
      spec.set(options, json_option_value(json_[spec.name]), max);
    else
      spec.set_text(options, form_.find(spec.name)->second);
  } catch (const OptionError& e) {
    throw bad_field(spec.name, e.must);
  }
}

const std::vector<std::string>& decode_option_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const DecodeOptionSpec& spec : decode_option_specs()) out.push_back(spec.name);
    out.push_back("glossary");  // DecodeOptions::glossary: an object, not a table option
    return out;
  }();
  return names;
}

DecodeOptions decode_options(const RequestFields& f, int max_beam, int max_tokens) {
  DecodeOptions o;
  for (const DecodeOptionSpec& spec : decode_option_specs()) {
    if (!f.has(spec.name)) continue;
    double max = spec.max;
    if (spec.bound == DecodeOptionSpec::Bound::kBeams) max = std::min<double>(max, max_beam);
    if (spec.bound == DecodeOptionSpec::Bound::kTokens) max = std::min<double>(max, max_tokens + spec.bound_offset);
    f.set(spec, o, max);
  }
  // {"Vertrag": "contract"}: each text's terms force their targets (ordo/glossary.h).
  if (const auto terms = f.string_map("glossary")) {
    auto glossary = std::make_shared<Glossary>();
    try {
      for (const auto& [source, target] : *terms) glossary->add(source, target, "field 'glossary'");
    } catch (const Error& e) {
      throw ApiError(400, std::string("Invalid request: ") + e.what());
    }
    if (!glossary->empty()) o.glossary = std::move(glossary);
  }
  return o;
}

size_t html_tag_count(const std::string& html) {
  size_t tags = 0;
  for (size_t i = 0; i + 1 < html.size(); ++i)
    if (html[i] == '<' && std::isalpha(static_cast<unsigned char>(html[i + 1]))) ++tags;
  return tags;
}

std::string join(const std::vector<std::string>& items, size_t limit) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (limit && i == limit) return out + ", ...";
    out += (i ? ", " : "") + items[i];
  }
  return out;
}

std::string shown(const std::string& value, size_t max_chars) {
  std::string out;
  size_t chars = 0;
  for (size_t i = 0; i < value.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(value[i]);
    if ((c & 0xC0) != 0x80 && chars++ == max_chars) return out + "...";
    if (c < 0x20 || c == 0x7F) {
      static const char hex[] = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

size_t utf8_length(const std::string& text) {
  size_t n = 0;
  for (unsigned char c : text)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

}  // namespace ordo::server
