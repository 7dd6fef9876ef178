// Files through `ordo serve`: POST /translate_file and GET /download_file as LibreTranslate
// answers them, and what DeepL's /v2/document shares with them (service.h): the upload read
// with its file name, the file read within FileLimits, its characters counted against the
// key, its sentences through the batcher in slices that each pass the request limits.
#include <cctype>
#include <cstdio>

#include "ordo/text.h"
#include "server/service.h"

namespace ordo::server {

namespace {

// A client's value in a message: shown() in quotes.
std::string in_quotes(const std::string& value, size_t max_chars = 64) { return "'" + shown(value, max_chars) + "'"; }

// A file name as clients may see it again: its last path part, no control characters, at most
// 200 bytes (the end kept: it holds the extension).
std::string clean_file_name(const std::string& given) {
  std::string name = given.substr(given.find_last_of("/\\") == std::string::npos ? 0 : given.find_last_of("/\\") + 1);
  for (char& c : name)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == '"') c = '_';
  if (name.size() > 200) {
    size_t cut = name.size() - 200;
    while (cut < name.size() && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) ++cut;  // whole characters
    name = name.substr(cut);
  }
  return name;
}

std::string percent_encoded(const std::string& text) {
  std::string out;
  char buffer[4];
  for (const char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      std::snprintf(buffer, sizeof(buffer), "%%%02X", u);
      out += buffer;
    }
  }
  return out;
}

// The extensions of the formats, as /frontend/settings lists them: ".txt", ".docx", ...
std::string extension_list() {
  std::vector<std::string> extensions;
  for (const FileFormatInfo& info : file_formats())
    extensions.insert(extensions.end(), info.extensions.begin(), info.extensions.end());
  return join(extensions);
}

// "scheme://host[:port]" of the request as its client addressed the server (its Host header),
// for URLs the client follows back; "" when the Host header is missing or not a host.
std::string base_url(const httplib::Request& req) {
  const std::string host = req.get_header_value("Host");
  if (host.empty() || host.size() > 255) return "";
  for (const char c : host)
    if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(".-:[]_", c)) return "";
  const std::string proto = req.get_header_value("X-Forwarded-Proto");
  return (proto == "https" ? "https://" : "http://") + host;
}

}  // namespace

const ServedModel& pair_model(const ModelSet& set, const std::string& source, const std::string& target,
                              const std::string& source_field, const std::string& target_field,
                              DecodeOptions& options) {
  if (!set.serves_language(target))
    throw ApiError(400, target_field + " " + in_quotes(target) +
                            " is not supported (served languages: " + set.language_list() + ")");
  if (!set.serves_language(source))
    throw ApiError(400, source_field + " " + in_quotes(source) +
                            " is not supported (served languages: " + set.language_list() + ")");
  const ServedModel* model = set.for_pair(source, target);
  if (!model)
    throw ApiError(400, language_name(target) + " (" + target + ") is not available as a target language from " +
                            language_name(source) + " (" + source + ") (served pairs: " + set.pair_list() + ")");
  options.preset = model->preset;
  if (model->multilingual()) {
    options.source_lang = model->model_code(source);
    options.target_lang = model->model_code(target);
  }
  return *model;
}

Service::Upload Service::read_upload(const httplib::Request& req, httplib::Response& res, const Reader& reader,
                                     const std::string& file_field, size_t max_bytes, const std::string& flag) const {
  if (!req.is_multipart_form_data())
    throw ApiError(400, "Invalid request: send the file as multipart/form-data, in the field '" + file_field +
                            "' with its file name");
  const size_t max = max_bytes > 0 ? max_bytes : config_.limits.max_file_bytes;
  bool too_large = false;
  std::multimap<std::string, std::string> fields;
  auto current = fields.end();
  Upload upload;
  size_t total = 0, file_parts = 0;
  bool in_file = false;
  const bool ok = reader(
      [&](const httplib::MultipartFormData& part) {
        in_file = part.name == file_field;
        if (in_file) {
          ++file_parts;
          upload.file_name = part.filename;
          upload.bytes.clear();
        } else {
          current = fields.emplace(part.name, std::string());
        }
        return true;
      },
      [&](const char* data, size_t n) {
        total += n;
        if (total > max) return !(too_large = true);
        if (in_file)
          upload.bytes.append(data, n);
        else if (current != fields.end())
          current->second.append(data, n);
        return true;
      });
  if (!ok) {
    if (too_large || res.status == 413)
      throw ApiError(413, "Request body larger than " + std::to_string(max) + " bytes (" + flag + ")");
    throw ApiError(400, "Invalid request: the body could not be read");
  }
  if (file_parts == 0) throw ApiError(400, "Invalid request: missing " + file_field + " parameter");
  if (file_parts > 1)
    throw ApiError(400, "Invalid request: more than one " + file_field + " part (one file a request)");
  upload.fields = RequestFields::from_form(std::move(fields));
  return upload;
}

void Service::admit_characters(const httplib::Request& req, int64_t chars, const std::string& model, bool deepl) {
  const RequestContext context = contexts_.of(req);
  AccessRecord& record = *context.record;
  record.chars = chars;
  record.model = model;
  if (!record.key) return;
  const KeyLimiter::Verdict verdict = limiter_.admit(*record.key, chars);
  if (verdict.status != 0) {
    metrics_.key_limited(record.key->id, verdict.limit);
    const bool quota = deepl && std::string(verdict.limit) == "daily_char_limit";
    throw ApiError(quota ? 456 : verdict.status, verdict.message, quota ? 0 : verdict.retry_after);
  }
  metrics_.key_used(record.key->id, chars);
}

FileDocument Service::read_file(const std::string& bytes, FileFormat format, const std::string& source,
                                const std::string& target) const {
  FileOptions options;
  options.source_language = source;
  options.target_language = target;
  options.limits.max_file_bytes = config_.limits.max_file_bytes;
  try {
    return FileDocument(bytes, format, options);
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }
}

std::vector<TranslationResult> Service::translate_slices(const ServedModel& model, const DecodeOptions& options,
                                                         const std::vector<std::string>& sentences,
                                                         const RequestContext& context, Clock::time_point deadline,
                                                         const std::function<bool()>& keep_going,
                                                         const std::function<void(size_t, size_t)>& on_slice) {
  // A slice is at most this many sentences, so that a file's progress shows and other
  // requests' batches go between its slices.
  constexpr size_t kMaxSlice = 64;
  DecodeOptions checked = options;  // what check_work() weighs: a glossary's sentences need weights
  checked.glossary.reset();
  if (options.glossary) checked.return_attention = true;
  std::vector<TranslationResult> results;
  results.reserve(sentences.size());
  size_t begin = 0;
  while (begin < sentences.size()) {
    if (keep_going && !keep_going()) throw ApiError(499, "the translation was stopped");
    size_t end = begin;
    std::vector<size_t> lengths;
    while (end < sentences.size() && end - begin < kMaxSlice) {
      if (has_text(sentences[end])) {
        size_t length = 0;
        try {
          length = model.translator->encode(sentences[end], checked).size();
        } catch (const Error& e) {
          throw ApiError(400, std::string("Invalid request: ") + e.what());
        }
        lengths.push_back(length);
        try {
          check_work(*model.translator, checked, lengths);
        } catch (const ApiError&) {
          if (lengths.size() == 1) throw;  // the one sentence alone is too much
          break;
        }
      }
      ++end;
    }
    const std::vector<std::string> slice(sentences.begin() + static_cast<long>(begin),
                                         sentences.begin() + static_cast<long>(end));
    std::vector<TranslationResult> done = translate(model, options, slice, context, deadline, {}, keep_going);
    for (TranslationResult& r : done) results.push_back(std::move(r));
    begin = end;
    if (on_slice) on_slice(begin, sentences.size());
  }
  return results;
}

std::string Service::translate_document(const ServedModel& model, DecodeOptions options, const FileDocument& document,
                                        const RequestContext& context, Clock::time_point deadline,
                                        const std::function<bool()>& keep_going,
                                        const std::function<void(size_t, size_t)>& on_slice) {
  // Inline markup and placeholders go back where their words are aligned.
  if (document.needs_alignment()) options.return_attention = true;
  const std::vector<TranslationResult> results =
      translate_slices(model, options, document.sentences(), context, deadline, keep_going, on_slice);
  std::vector<AlignedTranslation> aligned;
  aligned.reserve(results.size());
  for (const TranslationResult& r : results) aligned.push_back(aligned_translation(r));
  try {
    return document.rebuild(aligned);
  } catch (const Error& e) {
    throw ApiError(500, std::string("the translated file could not be written: ") + e.what());
  }
}

// POST /translate_file (multipart: file, source, target, api_key) as LibreTranslate answers
// it: {"translatedFileUrl": ".../download_file/<id>.<file name>"}, the file kept for
// FileServing::ttl_seconds. The translation happens within the request (as LibreTranslate's),
// within FileServing::timeout_seconds.
void Service::libre_translate_file(const httplib::Request& req, httplib::Response& res, const Reader& reader) {
  const RequestContext context = contexts_.of(req);
  const Clock::time_point deadline = request_deadline(context, config_.files.timeout_seconds);
  const Upload upload = read_upload(req, res, reader, "file");
  check_key(&upload.fields, req);
  require_ready();
  std::string source = upload.fields.string("source").value_or("");
  const std::string target = upload.fields.string("target").value_or("");
  if (source.empty()) throw ApiError(400, "Invalid request: missing source parameter");
  if (target.empty()) throw ApiError(400, "Invalid request: missing target parameter");
  const std::string name = clean_file_name(upload.file_name);
  if (name.empty())
    throw ApiError(400, "Invalid request: the file part has no file name (its extension names its format)");
  try {
    check_utf8(name, "the file name");
  } catch (const Error& e) {
    throw ApiError(400, std::string("Invalid request: ") + e.what());
  }
  const std::optional<FileFormat> format = file_format_of(name);
  if (!format) {
    const size_t dot = name.find_last_of('.');
    throw ApiError(400, "Invalid request: file type " +
                            (dot == std::string::npos ? std::string("(no extension)") : in_quotes(name.substr(dot))) +
                            " is not supported (supported: " + extension_list() + ")");
  }
  const ModelSet& set = models();
  if (!set.serves_language(target))
    throw ApiError(400, in_quotes(target) + " is not supported (served languages: " + set.language_list() + ")");
  if (source == "auto") {
    const FileDocument sample = read_file(upload.bytes, *format, "", target);
    source = detect_source(set, sample.sentences(), target, false, "source 'auto'", "the file").language;
  }
  DecodeOptions options;
  const ServedModel& model = pair_model(set, source, target, "source", "target", options);
  const FileDocument document = read_file(upload.bytes, *format, source, target);
  admit_characters(req, static_cast<int64_t>(document.characters()), model.name, false);
  std::string translated = translate_document(model, options, document, context, deadline);

  StoredFile file;
  file.name = name;
  file.media_type = file_format_info(*format).media_type;
  file.owner = context.record->key_id;
  file.characters = static_cast<int64_t>(document.characters());
  file.bytes = std::make_shared<const std::string>(std::move(translated));
  const std::string id = files_.add(std::move(file));
  send_json(res, 200,
            Json{{"translatedFileUrl", base_url(req) + "/download_file/" + id + "." + percent_encoded(name)}});
}

// GET /download_file/<id>.<file name>: the translated file, once per request until its time
// limit; 404 after.
void Service::libre_download_file(const httplib::Request& req, httplib::Response& res) {
  const std::string id = req.matches.size() > 2 ? req.matches[1].str() : "";
  const std::string name = req.matches.size() > 2 ? req.matches[2].str() : "";
  const std::optional<StoredFile> file = files_.find(id);
  if (!file || file->name != name || file->status != "done" || !file->bytes || !file->secret.empty())
    throw ApiError(404, "Not Found: no translated file " + in_quotes(id + "." + name, 120) + " (a file is kept " +
                            seconds_text(config_.files.ttl_seconds) + " s after its translation, --file-ttl)");
  std::string ascii = name;
  for (char& c : ascii)
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\\') c = '_';
  res.set_header("Content-Disposition",
                 "attachment; filename=\"" + ascii + "\"; filename*=UTF-8''" + percent_encoded(name));
  res.set_header("X-Content-Type-Options", "nosniff");
  res.status = 200;
  res.set_content(file->bytes->data(), file->bytes->size(), file->media_type.c_str());
}

}  // namespace ordo::server
