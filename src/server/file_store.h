// What `ordo serve` keeps between requests: a translated file waiting for its download
// (LibreTranslate's /translate_file answers a URL, GET /download_file serves it), a document
// job of DeepL's /v2/document (uploaded, translated in the background, fetched once), and
// DeepL's glossaries. Kept in memory, files for a time limit from when they are ready, all of
// it within caps of bytes and of entries, so that clients that never come back cost a bounded
// amount. And the bounded background workers that translate the documents: they end when the
// Service stops, never outliving it. No HTTP library types: unit tested alone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "ordo/glossary.h"

namespace ordo::server {

// `bytes` random bytes (the system's entropy source) as lower-case hex: ids clients cannot guess.
std::string random_hex(size_t bytes);

// What one entry holds.
struct StoredFile {
  std::string name;        // the file's name as the client gave it (the download's name)
  std::string media_type;  // of the file format
  std::string owner;       // the key id that made it ("" without --api-keys)
  std::string secret;      // DeepL's document_key ("" when the id alone fetches it)
  // "queued", "translating", "done" or "error" (DeepL's status values); a file stored ready
  // for download is "done".
  std::string status = "done";
  std::string error;                         // status "error": why
  int64_t characters = 0;                    // characters translated (billed_characters)
  double seconds_left = 0;                   // "translating": an estimate
  std::shared_ptr<const std::string> bytes;  // the translated file once done (else the upload)
};

struct FileStoreLimits {
  double ttl_seconds = 3600;             // a ready entry is dropped this long after it was ready
  size_t max_bytes = size_t(256) << 20;  // all entries' bytes together
  size_t max_entries = 64;               // entries at once, pending jobs included
};

class FileStore {
 public:
  using Clock = std::chrono::steady_clock;
  using Now = std::function<Clock::time_point()>;
  explicit FileStore(
      FileStoreLimits limits, Now now = [] { return Clock::now(); });

  // Keeps `file` under a new id (32 hex digits) and returns the id. A "done" or "error" entry
  // expires after the time limit; a pending one (queued, translating) waits for update().
  // Throws ApiError 429 (with Retry-After) when the entries or the bytes would pass the caps.
  std::string add(StoredFile file);
  // The entry of `id`, none when there is none or it has expired.
  std::optional<StoredFile> find(const std::string& id);
  // Changes the entry of `id` (none: false); its time limit starts when it becomes "done" or
  // "error". A change that would pass the byte cap sets it to "error" instead.
  bool update(const std::string& id, const std::function<void(StoredFile&)>& change);
  bool remove(const std::string& id);
  // find(), but while the entry is pending waits (at most until `until`) for it to be done or
  // an error: a client polling a small job's status sees it done at its first look.
  std::optional<StoredFile> wait(const std::string& id, Clock::time_point until);
  size_t size();
  size_t bytes();
  const FileStoreLimits& limits() const { return limits_; }

 private:
  struct Entry {
    StoredFile file;
    Clock::time_point expires = Clock::time_point::max();
  };
  void sweep(Clock::time_point now);  // under mutex_
  static size_t bytes_of(const StoredFile& file);
  const FileStoreLimits limits_;
  const Now now_;
  std::mutex mutex_;
  std::condition_variable changed_;  // an entry was updated
  std::map<std::string, Entry> entries_;
  size_t bytes_ = 0;
};

// A few worker threads and a bounded queue of jobs. A job is told to stop (its argument returns
// true) when the runner stops; stop() and the destructor wait for the running jobs to return
// and drop the queued ones, each told through `dropped` so that it can record why.
class JobRunner {
 public:
  using Stopping = std::function<bool()>;
  struct Job {
    std::function<void(const Stopping& stopping)> run;
    std::function<void()> dropped;  // the runner stopped before the job ran
  };
  JobRunner(size_t workers, size_t max_queued);
  ~JobRunner();
  JobRunner(const JobRunner&) = delete;
  JobRunner& operator=(const JobRunner&) = delete;

  // Queues `job`; false when the queue is full or the runner has stopped. The workers start
  // with the first job.
  bool submit(Job job);
  // Jobs queued and running.
  size_t pending();
  void stop();

 private:
  void work();
  const size_t workers_, max_queued_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Job> queue_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// A DeepL glossary: its terms in the order given, and the ordo::Glossary that applies them.
struct StoredGlossary {
  std::string id, name, source_lang, target_lang;  // languages as ISO 639-1 codes ("en")
  std::string creation_time;                       // ISO 8601, UTC ("2026-01-02T03:04:05.678Z")
  std::string owner;                               // the key id that made it
  std::vector<std::pair<std::string, std::string>> entries;
  std::shared_ptr<const Glossary> glossary;
  size_t bytes() const;  // of its terms and name
};

// DeepL's glossary entries as `format` gives them: "tsv" (source<TAB>target a line) or "csv"
// (source,target[,source_lang,target_lang] a line, RFC 4180 quotes); blank lines skipped, at
// most `max_entries`. Fills glossary.entries and glossary.glossary. Throws ApiError 400 naming
// the line and its fault (no tab, an empty term, a control character, a source term given
// twice, a CSV line's languages not the glossary's).
void read_glossary_entries(const std::string& text, const std::string& format, size_t max_entries,
                           StoredGlossary& glossary);
// The entries as DeepL answers them: TSV, one "source<TAB>target" a line.
std::string glossary_tsv(const StoredGlossary& glossary);

// Glossaries by id, each seen only by its owner; at most `max_glossaries` and `max_bytes` of
// terms together.
class GlossaryStore {
 public:
  GlossaryStore(size_t max_glossaries, size_t max_bytes);
  // Keeps `glossary` under a new id (a UUID) and returns it; ApiError 400 past a cap.
  std::shared_ptr<const StoredGlossary> add(StoredGlossary glossary);
  std::shared_ptr<const StoredGlossary> find(const std::string& owner, const std::string& id) const;
  std::vector<std::shared_ptr<const StoredGlossary>> list(const std::string& owner) const;
  bool remove(const std::string& owner, const std::string& id);

 private:
  const size_t max_glossaries_, max_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const StoredGlossary>> glossaries_;  // in creation order
  size_t bytes_ = 0;
};

}  // namespace ordo::server
