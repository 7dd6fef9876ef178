#include "io/verified_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

// Header-only: ordo_base (and the fuzz harnesses linking only it) need no libxxhash.
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "io/file.h"
#include "ordo/error.h"

namespace ordo::io {
namespace {

constexpr size_t kPreamble = 8 + 8 + 8;  // magic, header bytes, data bytes
constexpr size_t kChecksum = 8;

size_t align_up(size_t n) { return (n + kVerifiedFileAlign - 1) / kVerifiedFileAlign * kVerifiedFileAlign; }

void put_u64(uint8_t* out, uint64_t value) {
  for (int i = 0; i < 8; ++i, value >>= 8) out[i] = static_cast<uint8_t>(value & 0xff);
}

uint64_t get_u64(const uint8_t* in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i) value = (value << 8) | in[i];
  return value;
}

void check_magic(const std::string& magic) {
  if (magic.size() != 8) throw Error("verified file: the magic must be 8 characters, not '" + magic + "'");
}

// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// A writer that hashes every byte it writes.
struct HashingWriter {
  const std::string& path;
  int fd;
  XXH3_state_t* state;
  void write(const void* data, size_t size) {
    XXH3_64bits_update(state, data, size);
    write_unhashed(data, size);
  }
  void write_unhashed(const void* data, size_t size) {
    const auto* bytes = static_cast<const uint8_t*>(data);
    while (size > 0) {
      const ssize_t n = ::write(fd, bytes, size);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw Error(path + ": write failed (" + std::strerror(n < 0 ? errno : EIO) + ")");
      bytes += n;
      size -= static_cast<size_t>(n);
    }
  }
  void zeros(size_t size) {
    static const uint8_t page[kVerifiedFileAlign] = {};
    for (size_t n; size > 0; size -= n) {
      n = std::min(size, sizeof(page));
      write(page, n);
    }
  }
};

}  // namespace

uint64_t verified_checksum(const void* data, size_t size) { return XXH3_64bits(data, size); }

const uint8_t* VerifiedFile::part(const nlohmann::json& range, size_t* bytes) const {
  if (!range.is_array() || range.size() != 2 || !range[0].is_number_unsigned() || !range[1].is_number_unsigned())
    throw Error("verified file: a part is not [offset, bytes]: " + range.dump().substr(0, 80));
  const uint64_t offset = range[0].get<uint64_t>(), n = range[1].get<uint64_t>();
  if (offset > data_bytes || n > data_bytes - offset)
    throw Error("verified file: part [" + std::to_string(offset) + ", " + std::to_string(n) + "] lies outside the " +
                std::to_string(data_bytes) + " data bytes");
  *bytes = static_cast<size_t>(n);
  return data.get() + offset;
}

namespace {

// Memory of this process's own for a file's `size` bytes: anonymous, page-aligned, faulted in
// by the threads that read into it (populate). Not in transparent huge pages: with the page
// cache full (the usual state of a machine that has read a few models), the kernel's
// compaction for them costs more than the faults they save, several times the read itself
// (docs/benchmarks.md, "Memory and start-up").
std::shared_ptr<uint8_t> allocate_for(const std::string& path, size_t size) {
  const size_t length = align_up(size);
  void* memory = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    throw Error(path + ": cannot allocate " + std::to_string(size) + " bytes to read it (" + std::strerror(errno) +
                ")");
  return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(memory), [length](uint8_t* p) { ::munmap(p, length); });
}

// Faults in [at, at + bytes) with one call instead of a trap per 4 KB page as read() fills it,
// which is cheaper (MADV_POPULATE_WRITE, Linux 5.14: older kernels fault the pages in on the
// way).
void populate(uint8_t* at, size_t bytes) {
  constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE, not in every libc's headers
  const auto page = reinterpret_cast<uintptr_t>(at) / kVerifiedFileAlign * kVerifiedFileAlign;
  ::madvise(reinterpret_cast<void*>(page), reinterpret_cast<uintptr_t>(at) + bytes - page, kPopulateWrite);
}

// Reads bytes [from, to) of the file into `buffer` at the same offsets, hashing them into
// `state` (when given) chunk by chunk while each is still in the CPU's cache. "" or the error.
std::string read_range(int fd, const std::string& path, uint8_t* buffer, size_t from, size_t to, size_t hashed,
                       XXH3_state_t* state) {
  constexpr size_t kChunk = size_t{8} << 20;
  for (size_t at = from; at < to;) {
    const size_t want = std::min(to - at, kChunk - at % kChunk);
    populate(buffer + at, want);
    const ssize_t n = ::pread(fd, buffer + at, want, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return path + ": read error (" + std::strerror(errno) + ")";
    if (n == 0) return path + ": shrank to " + std::to_string(at) + " bytes while being read";
    if (state && at < hashed) XXH3_64bits_update(state, buffer + at, std::min(static_cast<size_t>(n), hashed - at));
    at += static_cast<size_t>(n);
  }
  return "";
}

}  // namespace

VerifiedFile read_verified_file(const std::string& path, const std::string& magic, size_t max_bytes, int threads) {
  check_magic(magic);
  const Descriptor file{open_regular_file(path)};  // O_NONBLOCK: a FIFO is refused, never waited on
  struct stat st;
  if (::fstat(file.fd, &st) != 0) throw Error(path + ": cannot read file (" + std::strerror(errno) + ")");
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < kPreamble + kChecksum) throw Error(path + ": truncated (" + std::to_string(size) + " bytes)");
  if (size > max_bytes)
    throw Error(path + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_bytes) +
                " it can hold");

  uint8_t preamble[kPreamble];
  if (::pread(file.fd, preamble, kPreamble, 0) != static_cast<ssize_t>(kPreamble))
    throw Error(path + ": cannot read file (" + std::strerror(errno) + ")");
  if (std::memcmp(preamble, magic.data(), 8) != 0) throw Error(path + ": not a " + magic + " file (wrong magic)");
  const uint64_t header_bytes = get_u64(preamble + 8), data_bytes = get_u64(preamble + 16);
  if (header_bytes > size || data_bytes > size)
    throw Error(path + ": truncated: " + std::to_string(size) + " bytes, its preamble announces more");
  const size_t data_start = align_up(kPreamble + header_bytes);
  const size_t expected = data_start + data_bytes + kChecksum;  // each term <= size: no overflow
  if (size != expected)
    throw Error(path + ": " + (size < expected ? "truncated: " : "appended to: ") + std::to_string(size) +
                " bytes where its preamble says " + std::to_string(expected));

  // The whole file is read into memory of our own (a mapping would die of SIGBUS if the file
  // shrank later), in `threads` consecutive shares at once (faulting in the pages and copying
  // them is most of the time, and both divide); the first share is hashed as it is read, the
  // others after it, in order (XXH3 is one sequential stream).
  const std::shared_ptr<uint8_t> buffer = allocate_for(path, size);
  ::posix_fadvise(file.fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  const size_t hashed = size - kChecksum;
  const size_t shares = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(threads, 1)), size >> 20));
  constexpr size_t kShareAlign = size_t{2} << 20;
  std::vector<size_t> bounds(shares + 1, size);
  for (size_t i = 0; i < shares; ++i) bounds[i] = std::min(size, size / shares * i / kShareAlign * kShareAlign);
  std::vector<std::string> errors(shares);
  const auto read_share = [&](size_t i) {
    errors[i] = read_range(file.fd, path, buffer.get(), bounds[i], bounds[i + 1], hashed, i == 0 ? &state : nullptr);
  };
  std::vector<std::thread> helpers;
  for (size_t i = 1; i < shares; ++i) {
    try {
      helpers.emplace_back(read_share, i);
    } catch (const std::system_error&) {  // no thread to be had: read here
      read_share(i);
    }
  }
  read_share(0);
  for (std::thread& helper : helpers) helper.join();
  for (const std::string& error : errors)
    if (!error.empty()) throw Error(error);
  if (bounds[1] < hashed) XXH3_64bits_update(&state, buffer.get() + bounds[1], hashed - bounds[1]);
  if (XXH3_64bits_digest(&state) != get_u64(buffer.get() + hashed))
    throw Error(path + ": checksum mismatch (the file was damaged or changed after it was written)");

  VerifiedFile out;
  const auto* header = reinterpret_cast<const char*>(buffer.get() + kPreamble);
  out.header = nlohmann::json::parse(header, header + header_bytes, nullptr, /*allow_exceptions=*/false);
  if (out.header.is_discarded() || !out.header.is_object()) throw Error(path + ": its header is not a JSON object");
  out.data = std::shared_ptr<const uint8_t>(buffer, buffer.get() + data_start);
  out.data_bytes = data_bytes;
  return out;
}

nlohmann::json VerifiedFileWriter::add(const void* data, size_t bytes) {
  const size_t offset = align_up(end_);
  parts_.push_back({data, bytes, offset});
  end_ = offset + bytes;
  return nlohmann::json::array({offset, bytes});
}

void VerifiedFileWriter::write(const std::string& path, const std::string& magic, const nlohmann::json& header) const {
  check_magic(magic);
  static std::atomic<unsigned> serial{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(serial++);
  Descriptor file{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)};
  if (file.fd < 0) throw Error(tmp + ": cannot create file (" + std::strerror(errno) + ")");
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  HashingWriter out{tmp, file.fd, &state};
  try {
    const std::string text = header.dump();
    uint8_t preamble[kPreamble];
    std::memcpy(preamble, magic.data(), 8);
    put_u64(preamble + 8, text.size());
    put_u64(preamble + 16, end_);
    out.write(preamble, sizeof(preamble));
    out.write(text.data(), text.size());
    const size_t data_start = align_up(kPreamble + text.size());
    out.zeros(data_start - kPreamble - text.size());
    size_t at = 0;
    for (const Part& part : parts_) {
      out.zeros(part.offset - at);
      out.write(part.data, part.bytes);
      at = part.offset + part.bytes;
    }
    uint8_t checksum[kChecksum];
    put_u64(checksum, XXH3_64bits_digest(&state));
    out.write_unhashed(checksum, sizeof(checksum));  // last: a torn write never has it right
    if (::close(file.fd) != 0) {
      file.fd = -1;
      throw Error(tmp + ": write failed (" + std::strerror(errno) + ")");
    }
    file.fd = -1;
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw Error(path + ": cannot replace file (" + std::strerror(errno) + ")");
  } catch (...) {
    ::unlink(tmp.c_str());
    throw;
  }
}

}  // namespace ordo::io
