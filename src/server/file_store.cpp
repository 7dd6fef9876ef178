// The kept files and the document workers of `ordo serve` (file_store.h).
#include "server/file_store.h"

#include <cmath>
#include <random>
#include <set>

#include "ordo/error.h"

#include "server/request_fields.h"

namespace ordo::server {

std::string random_hex(size_t bytes) {
  static const char* const kDigits = "0123456789abcdef";
  std::random_device device;  // /dev/urandom
  std::string out;
  out.reserve(bytes * 2);
  for (size_t i = 0; i < bytes; ++i) {
    const unsigned value = device() & 0xffu;
    out += kDigits[value >> 4];
    out += kDigits[value & 0xfu];
  }
  return out;
}

FileStore::FileStore(FileStoreLimits limits, Now now) : limits_(limits), now_(std::move(now)) {}

size_t FileStore::bytes_of(const StoredFile& file) {
  return (file.bytes ? file.bytes->size() : 0) + file.name.size() + file.error.size();
}

void FileStore::sweep(Clock::time_point now) {
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now >= it->second.expires) {
      bytes_ -= bytes_of(it->second.file);
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
}

std::string FileStore::add(StoredFile file) {
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mutex_);
  sweep(now);
  const size_t size = bytes_of(file);
  // The soonest entry to expire frees room first: a client may try again then.
  const auto retry_after = [&] {
    double soonest = limits_.ttl_seconds;
    for (const auto& [id, entry] : entries_)
      if (entry.expires != Clock::time_point::max())
        soonest = std::min(soonest, std::chrono::duration<double>(entry.expires - now).count());
    return std::max(1, static_cast<int>(std::ceil(soonest)));
  };
  if (entries_.size() >= limits_.max_entries)
    throw ApiError(429,
                   "too many files kept: " + std::to_string(entries_.size()) + " files wait for their download " +
                       "(this server keeps at most " + std::to_string(limits_.max_entries) + ", --max-stored-files)",
                   retry_after());
  if (bytes_ + size > limits_.max_bytes)
    throw ApiError(429,
                   "too many bytes kept: " + std::to_string(bytes_) + " bytes of files wait for their download and " +
                       "this one has " + std::to_string(size) + " (this server keeps at most " +
                       std::to_string(limits_.max_bytes) + ", --max-stored-file-bytes)",
                   retry_after());
  std::string id;
  do {
    id = random_hex(16);
  } while (entries_.count(id));
  Entry entry;
  const bool ready = file.status == "done" || file.status == "error";
  entry.file = std::move(file);
  if (ready)
    entry.expires =
        now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.ttl_seconds));
  entries_.emplace(id, std::move(entry));
  bytes_ += size;
  return id;
}

std::optional<StoredFile> FileStore::find(const std::string& id) {
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mutex_);
  sweep(now);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return std::nullopt;
  return it->second.file;
}

bool FileStore::update(const std::string& id, const std::function<void(StoredFile&)>& change) {
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mutex_);
  sweep(now);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  Entry& entry = it->second;
  const size_t before = bytes_of(entry.file);
  StoredFile changed = entry.file;
  change(changed);
  if (bytes_ - before + bytes_of(changed) > limits_.max_bytes) {
    changed = entry.file;
    changed.bytes.reset();
    changed.status = "error";
    changed.error = "the translated file does not fit in this server's store of " + std::to_string(limits_.max_bytes) +
                    " bytes (--max-stored-file-bytes) now; try again later";
  }
  const bool was_ready = entry.file.status == "done" || entry.file.status == "error";
  const bool ready = changed.status == "done" || changed.status == "error";
  bytes_ = bytes_ - before + bytes_of(changed);
  entry.file = std::move(changed);
  if (ready && !was_ready)
    entry.expires =
        now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limits_.ttl_seconds));
  changed_.notify_all();
  return true;
}

std::optional<StoredFile> FileStore::wait(const std::string& id, Clock::time_point until) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    sweep(now_());
    const auto it = entries_.find(id);
    if (it == entries_.end()) return std::nullopt;
    const std::string& status = it->second.file.status;
    if (status == "done" || status == "error" || now_() >= until) return it->second.file;
    changed_.wait_until(lock, until);
  }
}

bool FileStore::remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  bytes_ -= bytes_of(it->second.file);
  entries_.erase(it);
  return true;
}

size_t FileStore::size() {
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mutex_);
  sweep(now);
  return entries_.size();
}

size_t FileStore::bytes() {
  const Clock::time_point now = now_();
  std::lock_guard<std::mutex> lock(mutex_);
  sweep(now);
  return bytes_;
}

JobRunner::JobRunner(size_t workers, size_t max_queued)
    : workers_(std::max<size_t>(1, workers)), max_queued_(max_queued) {}

JobRunner::~JobRunner() { stop(); }

bool JobRunner::submit(Job job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopping_ || queue_.size() >= max_queued_) return false;
  queue_.push_back(std::move(job));
  if (threads_.size() < workers_ && threads_.size() < queue_.size() + running_)
    threads_.emplace_back([this] { work(); });
  wake_.notify_one();
  return true;
}

size_t JobRunner::pending() {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size() + running_;
}

void JobRunner::work() {
  const Stopping stopping = [this] {
    std::lock_guard<std::mutex> lock(mutex_);
    return stopping_;
  };
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    lock.unlock();
    try {
      job.run(stopping);
    } catch (...) {  // a job records its own errors; nothing may end the worker
    }
    lock.lock();
    --running_;
  }
}

void JobRunner::stop() {
  std::deque<Job> dropped;
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (Job& job : dropped)
    if (job.dropped) job.dropped();
  for (std::thread& thread : threads)
    if (thread.joinable()) thread.join();
}

size_t StoredGlossary::bytes() const {
  size_t n = name.size();
  for (const auto& [source, target] : entries) n += source.size() + target.size();
  return n;
}

namespace {

// A client's value in a message: shown() in quotes.
std::string in_quotes(const std::string& value, size_t max_chars = 64) { return "'" + shown(value, max_chars) + "'"; }

// The fields of one CSV line (RFC 4180 quotes: "a,b" and "" for a quote); `where` in errors.
std::vector<std::string> csv_fields(const std::string& line, const std::string& where) {
  std::vector<std::string> fields(1);
  size_t i = 0;
  while (i <= line.size()) {
    std::string& field = fields.back();
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size()) throw ApiError(400, where + ": a quoted field is not closed");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',')
        throw ApiError(400, where + ": a quoted field must end at a comma or the line's end");
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    fields.emplace_back();
  }
  return fields;
}

std::string lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

}  // namespace

void read_glossary_entries(const std::string& text, const std::string& format, size_t max_entries,
                           StoredGlossary& glossary) {
  if (format != "tsv" && format != "csv")
    throw ApiError(400, "Value for 'entries_format' not supported: " + in_quotes(format) + " (tsv, csv)");
  auto terms = std::make_shared<Glossary>();
  std::vector<std::pair<std::string, std::string>> entries;
  std::set<std::string> sources;
  size_t line_number = 0;
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(at, end - at);
    at = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line_number == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);  // a byte order mark
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = "entries line " + std::to_string(line_number);
    std::vector<std::string> fields;
    if (format == "tsv") {
      const size_t tab = line.find('\t');
      if (tab == std::string::npos) throw ApiError(400, where + ": no tab between the source and the target term");
      if (line.find('\t', tab + 1) != std::string::npos)
        throw ApiError(400, where + ": more than one tab (one source<TAB>target pair a line)");
      fields = {line.substr(0, tab), line.substr(tab + 1)};
    } else {
      fields = csv_fields(line, where);
      if (fields.size() != 2 && fields.size() != 4)
        throw ApiError(400, where + ": " + std::to_string(fields.size()) +
                                " fields; a line is source,target or source,target,source_lang,target_lang");
      if (fields.size() == 4 && (lower(fields[2]) != glossary.source_lang || lower(fields[3]) != glossary.target_lang))
        throw ApiError(400, where + ": the languages " + in_quotes(fields[2]) + "," + in_quotes(fields[3]) +
                                " are not the glossary's (" + glossary.source_lang + "," + glossary.target_lang + ")");
    }
    for (size_t k = 0; k < 2; ++k)
      for (const char c : fields[k])
        if (static_cast<unsigned char>(c) < 0x20)
          throw ApiError(400, where + ": the " + (k ? "target" : "source") + " term holds a control character");
    if (entries.size() >= max_entries)
      throw ApiError(400, "entries: more than " + std::to_string(max_entries) + " entries (this server's limit)");
    try {
      terms->add(fields[0], fields[1], where);
    } catch (const Error& e) {
      throw ApiError(400, e.what());
    }
    // As Glossary::add keeps them: trimmed of spaces.
    const auto trim = [](const std::string& s) {
      const size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
      return b == std::string::npos ? std::string() : s.substr(b, e + 1 - b);
    };
    const std::string source = trim(fields[0]), target = trim(fields[1]);
    if (!sources.insert(source).second)
      throw ApiError(400, where + ": the source term " + in_quotes(source) + " is already on an earlier line");
    entries.emplace_back(source, target);
  }
  if (entries.empty()) throw ApiError(400, "Parameter 'entries' holds no entry (one source<TAB>target pair a line)");
  glossary.entries = std::move(entries);
  glossary.glossary = std::move(terms);
}

std::string glossary_tsv(const StoredGlossary& glossary) {
  std::string out;
  for (size_t i = 0; i < glossary.entries.size(); ++i) {
    if (i) out += '\n';
    out += glossary.entries[i].first + '\t' + glossary.entries[i].second;
  }
  return out;
}

GlossaryStore::GlossaryStore(size_t max_glossaries, size_t max_bytes)
    : max_glossaries_(max_glossaries), max_bytes_(max_bytes) {}

std::shared_ptr<const StoredGlossary> GlossaryStore::add(StoredGlossary glossary) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (glossaries_.size() >= max_glossaries_)
    throw ApiError(400,
                   "this server keeps at most " + std::to_string(max_glossaries_) + " glossaries; delete one first");
  const size_t size = glossary.bytes();
  if (bytes_ + size > max_bytes_)
    throw ApiError(400, "this server keeps at most " + std::to_string(max_bytes_) +
                            " bytes of glossary terms and this glossary has " + std::to_string(size) +
                            "; delete one first");
  const std::string hex = random_hex(16);
  glossary.id = hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" +
                hex.substr(20);
  auto stored = std::make_shared<const StoredGlossary>(std::move(glossary));
  glossaries_.push_back(stored);
  bytes_ += size;
  return stored;
}

std::shared_ptr<const StoredGlossary> GlossaryStore::find(const std::string& owner, const std::string& id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& g : glossaries_)
    if (g->id == id && g->owner == owner) return g;
  return nullptr;
}

std::vector<std::shared_ptr<const StoredGlossary>> GlossaryStore::list(const std::string& owner) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<const StoredGlossary>> out;
  for (const auto& g : glossaries_)
    if (g->owner == owner) out.push_back(g);
  return out;
}

bool GlossaryStore::remove(const std::string& owner, const std::string& id) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = glossaries_.begin(); it != glossaries_.end(); ++it) {
    if ((*it)->id == id && (*it)->owner == owner) {
      bytes_ -= (*it)->bytes();
      glossaries_.erase(it);
      return true;
    }
  }
  return false;
}

}  // namespace ordo::server
