// A file ordo writes for itself and reads back later (the packed weights cache), which it
// must not trust: a disk, a crash or another process may have damaged, truncated or
// replaced it since. A damaged file would otherwise give garbage with exit 0, a FIFO would
// hang the reader, and a file shrinking under a memory mapping kills the process (SIGBUS).
// So the file is read whole, once, into memory this process owns (never mapped), and is
// used only when every check passes: a regular file (opened without blocking), the size its
// preamble announces, and an XXH3-64 checksum over everything before it, written last (a
// partial write is never valid). Torch-free, so the fuzz harness reads it as ordo does.
//
// Layout: magic (8 bytes) | header bytes H (u64 LE) | data bytes D (u64 LE) | JSON header
// (H bytes) | zeros up to a 4096-byte boundary | data (D bytes, parts page-aligned) |
// checksum (u64 LE, XXH3-64 of every byte before it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ordo::io {

constexpr size_t kVerifiedFileAlign = 4096;  // parts start on a page (oneDNN reads them in place)

struct VerifiedFile {
  nlohmann::json header;
  std::shared_ptr<const uint8_t> data;  // the data section, page-aligned, owned by this process
  size_t data_bytes = 0;
  // The part `range` ([offset, bytes], as VerifiedFileWriter::add gave it) of the data.
  // Throws ordo::Error when the range is malformed or does not lie inside the data.
  const uint8_t* part(const nlohmann::json& range, size_t* bytes) const;
};

// XXH3-64 of `size` bytes (the checksum of the format above).
uint64_t verified_checksum(const void* data, size_t size);

// Reads and checks `path` (see above): `magic` must be 8 characters, files larger than
// `max_bytes` are refused before anything is allocated. Throws ordo::Error naming the file
// and what is wrong with it (not a regular file, truncated, checksum mismatch, header).
// `threads` > 1 read consecutive shares of the file at once (the same bytes, the same checks).
VerifiedFile read_verified_file(const std::string& path, const std::string& magic, size_t max_bytes, int threads = 1);

// Collects the parts of a file, then writes it: under a temporary name, the checksum last,
// renamed into place. The parts are not copied: they must stay alive until write().
class VerifiedFileWriter {
 public:
  // Places `bytes` at `data` on the next page boundary; returns [offset, bytes] for the header.
  nlohmann::json add(const void* data, size_t bytes);
  // Throws ordo::Error naming the file (no space, no permission); nothing is left behind then.
  void write(const std::string& path, const std::string& magic, const nlohmann::json& header) const;

 private:
  struct Part {
    const void* data;
    size_t bytes, offset;
  };
  std::vector<Part> parts_;
  size_t end_ = 0;
};

}  // namespace ordo::io
