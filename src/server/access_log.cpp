#include "server/access_log.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ordo/error.h"

namespace ordo::server {

std::string request_id(const std::string& client_value) {
  bool sane = !client_value.empty() && client_value.size() <= 128;
  for (const char c : client_value)
    sane = sane && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    std::strchr("-_.:/+=", c) != nullptr);
  if (sane) return client_value;
  static const uint64_t seed = std::random_device{}() * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(::time(nullptr));
  static std::atomic<uint64_t> counter{0};
  uint64_t z = seed + 0x9E3779B97F4A7C15ull * ++counter;  // splitmix64: distinct for distinct counters
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  char out[17];
  std::snprintf(out, sizeof(out), "%016llx", static_cast<unsigned long long>(z));
  return out;
}

namespace {

// Writes all of `text` to `fd`, going on after a signal or a partial write; gives up on an error
// (a full disk, a closed pipe): the log never stops the server. Returns the bytes written.
size_t write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

// Writes `lines` (each ending in a newline) in one write(2) and returns how many are not in the
// log whole. When the write stops part way (a full disk: ENOSPC; a file size limit: EFBIG), a
// regular file is cut back to the end of the last whole line written, so that no half line
// stays for the next batch to be glued to. A pipe or a terminal cannot be cut: its reader has
// the part written, and a closed pipe has no reader left to mind.
size_t write_lines(int fd, const std::deque<std::string>& lines) {
  std::string batch;
  for (const std::string& text : lines) batch += text;
  const size_t done = write_all(fd, batch);
  if (done == batch.size()) return 0;
  size_t whole = 0, whole_bytes = 0;
  for (const std::string& text : lines) {
    if (whole_bytes + text.size() > done) break;
    whole_bytes += text.size();
    ++whole;
  }
  struct stat st;
  const size_t partial = done - whole_bytes;
  if (partial > 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
    // The write left the offset at its end (O_APPEND too); the offset is set back as well, for
    // a stderr redirected without O_APPEND ("2>file"), which would otherwise leave a hole.
    const off_t end = ::lseek(fd, 0, SEEK_CUR);
    const off_t cut = end - static_cast<off_t>(partial);
    if (end >= 0 && cut >= 0 && ::ftruncate(fd, cut) == 0) ::lseek(fd, cut, SEEK_SET);
  }
  return lines.size() - whole;
}

}  // namespace

void stderr_line(const std::string& line) { write_all(STDERR_FILENO, line + "\n"); }

AccessLog::AccessLog(const std::string& path, bool log_text) : log_text_(log_text) {
  if (path.empty() || path == "-") {
    shared_->fd = STDERR_FILENO;
  } else if (path != "off") {
    shared_->fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
    if (shared_->fd < 0)
      throw Error(path + ": cannot open the access log for appending (" + std::strerror(errno) + ")");
    shared_->own = true;
  }
  if (shared_->fd >= 0) writer_ = std::thread([shared = shared_] { run(shared); });
}

AccessLog::~AccessLog() {
  if (!writer_.joinable()) return;
  std::unique_lock<std::mutex> lock(shared_->mutex);
  shared_->stopping = true;
  shared_->wake.notify_all();
  // What is queued is written first, unless the writer is stuck.
  const bool done = shared_->wake.wait_for(lock, std::chrono::seconds(5), [&] { return shared_->done; });
  lock.unlock();
  if (done)
    writer_.join();
  else
    writer_.detach();  // it holds `shared`: nothing it touches is freed
}

void AccessLog::write(const nlohmann::ordered_json& line) {
  if (shared_->fd < 0) return;
  std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  {
    std::lock_guard<std::mutex> lock(shared_->mutex);
    if (shared_->queue.size() >= kMaxQueuedLines) {
      ++dropped_;
      return;
    }
    shared_->queue.push_back(std::move(text));
  }
  shared_->wake.notify_all();
}

void AccessLog::run(const std::shared_ptr<Shared>& shared) {
  std::unique_lock<std::mutex> lock(shared->mutex);
  while (true) {
    shared->wake.wait(lock, [&] { return shared->stopping || !shared->queue.empty(); });
    if (shared->queue.empty()) break;  // stopping, all written
    std::deque<std::string> lines;
    lines.swap(shared->queue);
    lock.unlock();
    // One write(2) of whole lines: a reader of the file (tail -f, a log shipper) never meets a
    // line cut where stdio's buffer would have split it.
    const size_t unwritten = write_lines(shared->fd, lines);
    lock.lock();
    shared->unwritten += unwritten;
  }
  shared->done = true;
  shared->wake.notify_all();
}

std::string AccessLog::now_text() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  ::gmtime_r(&seconds, &utc);
  char out[64];  // room for any int the compiler imagines in each field
  std::snprintf(out, sizeof(out), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", utc.tm_year + 1900, utc.tm_mon + 1,
                utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, static_cast<int>(ms));
  return out;
}

}  // namespace ordo::server
