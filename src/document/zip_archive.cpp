// Zip archives within FileLimits (zip_archive.h). libzip reads the archive in place from memory
// and writes it back into a second in-memory source, copying the entries not replaced as they
// were. It trusts the archive more than an untrusted file deserves, so this file checks first:
// the entry count from the end-of-central-directory record (zip64 included) before libzip
// allocates the directory, the raw names against the central directory itself (libzip hands
// names out as C strings, so a NUL inside one would go unseen), and the bytes of a part as they
// come out of the inflater (declared sizes are the archive's word, not a bound).
#include "document/zip_archive.h"

#include <zip.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>

#include "ordo/error.h"

namespace ordo::document {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kChunk = size_t{64} << 10;

std::string size_text(size_t bytes) {
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes / 1024) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// A part name for a message: bytes outside printable ASCII as \xNN, long names cut.
std::string printable(const std::string& name) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < name.size() && i < 200; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (name.size() > 200) out += "...";
  return out;
}

uint64_t little_endian(const std::string& bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

// What the end of central directory record says (zip64's when the classic one defers to it).
struct Directory {
  bool found = false;
  uint64_t entries = 0, offset = 0, size = 0;
  size_t end_record = 0;  // where the classic record starts
};

Directory find_directory(const std::string& bytes) {
  Directory dir;
  if (bytes.size() < 22) return dir;
  const size_t lowest = bytes.size() > 22 + 65535 ? bytes.size() - 22 - 65535 : 0;
  for (size_t at = bytes.size() - 22;; --at) {
    if (std::memcmp(bytes.data() + at, "PK\x05\x06", 4) == 0) {
      dir.found = true;
      dir.end_record = at;
      dir.entries = little_endian(bytes, at + 10, 2);
      dir.size = little_endian(bytes, at + 12, 4);
      dir.offset = little_endian(bytes, at + 16, 4);
      break;
    }
    if (at == lowest) return dir;
  }
  if ((dir.entries == 0xffff || dir.size == 0xffffffff || dir.offset == 0xffffffff) && dir.end_record >= 20 &&
      std::memcmp(bytes.data() + dir.end_record - 20, "PK\x06\x07", 4) == 0) {
    const uint64_t at = little_endian(bytes, dir.end_record - 20 + 8, 8);
    if (at <= bytes.size() && bytes.size() - at >= 56 && std::memcmp(bytes.data() + at, "PK\x06\x06", 4) == 0) {
      dir.entries = little_endian(bytes, at + 32, 8);
      dir.size = little_endian(bytes, at + 40, 8);
      dir.offset = little_endian(bytes, at + 48, 8);
    }
  }
  return dir;
}

// The raw names of the central directory, or none when it is not where the record says (then
// libzip decides whether the archive can be read at all).
bool raw_names(const std::string& bytes, const Directory& dir, std::vector<std::string>& names) {
  uint64_t at = dir.offset;
  if (at > bytes.size() || bytes.size() - at < 4 || std::memcmp(bytes.data() + at, "PK\x01\x02", 4) != 0) {
    if (dir.size > dir.end_record) return false;
    at = dir.end_record - dir.size;  // data before the archive (a self-extracting stub)
  }
  for (uint64_t i = 0; i < dir.entries; ++i) {
    if (at > bytes.size() || bytes.size() - at < 46 || std::memcmp(bytes.data() + at, "PK\x01\x02", 4) != 0)
      return false;
    const uint64_t name = little_endian(bytes, at + 28, 2), extra = little_endian(bytes, at + 30, 2),
                   comment = little_endian(bytes, at + 32, 2);
    if (bytes.size() - at - 46 < name) return false;
    names.emplace_back(bytes, at + 46, name);
    at += 46 + name + extra + comment;
  }
  return true;
}

// Why a part name is unsafe to hand to anything that might treat it as a path, or "".
std::string name_fault(const std::string& name) {
  if (name.find('\0') != std::string::npos) return "has a NUL byte";
  if (name.find('\\') != std::string::npos) return "has a backslash";
  if (!name.empty() && name[0] == '/') return "is an absolute path";
  if (name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0])))
    return "is an absolute path";
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string::npos) end = name.size();
    if (name.compare(begin, end - begin, "..") == 0) return "has a '..' component";
    begin = end + 1;
  }
  return "";
}

}  // namespace

struct ZipArchive::Impl {
  std::string bytes;  // the archive as given: libzip reads it in place
  FileLimits limits;
  std::string what;
  zip_source_t* source = nullptr;
  zip_t* zip = nullptr;
  std::map<std::string, zip_uint64_t> index;

  ~Impl() {
    if (zip) {
      zip_discard(zip);
    } else if (source) {
      zip_source_free(source);
    }
  }
  Error error(const std::string& message) const { return Error(what + ": " + message); }
};

ZipArchive::ZipArchive(const std::string& bytes, const FileLimits& limits, const std::string& what)
    : impl_(std::make_unique<Impl>()) {
  Impl& z = *impl_;
  z.limits = limits;
  z.what = what;
  if (bytes.size() > limits.max_file_bytes)
    throw z.error(size_text(bytes.size()) + " is past " + size_text(limits.max_file_bytes) + " (limit max_file_bytes)");
  const Directory dir = find_directory(bytes);
  if (!dir.found) throw z.error("not a zip archive (no end of central directory record)");
  if (dir.entries > limits.max_entries)
    throw z.error(std::to_string(dir.entries) + " parts (limit max_entries " + std::to_string(limits.max_entries) +
                  ")");
  z.bytes = bytes;

  zip_error_t error;
  zip_error_init(&error);
  z.source = zip_source_buffer_create(z.bytes.data(), z.bytes.size(), 0, &error);
  if (!z.source) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw z.error("cannot read the archive (" + text + ")");
  }
  z.zip = zip_open_from_source(z.source, ZIP_RDONLY, &error);
  if (!z.zip) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw z.error("not a zip archive (" + text + ")");
  }
  zip_error_fini(&error);

  const zip_int64_t count = zip_get_num_entries(z.zip, 0);
  if (count < 0 || static_cast<uint64_t>(count) > limits.max_entries)
    throw z.error(std::to_string(count) + " parts (limit max_entries " + std::to_string(limits.max_entries) + ")");
  std::vector<std::string> raw;
  if (!raw_names(z.bytes, dir, raw) || raw.size() != static_cast<size_t>(count)) raw.clear();
  for (zip_int64_t i = 0; i < count; ++i) {
    const char* name = zip_get_name(z.zip, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (!name) throw z.error("part " + std::to_string(i) + " has no name (" + zip_strerror(z.zip) + ")");
    std::string full = name;
    if (!raw.empty() && raw[static_cast<size_t>(i)].find('\0') != std::string::npos) full = raw[static_cast<size_t>(i)];
    const std::string fault = name_fault(full);
    if (!fault.empty()) throw z.error("part name '" + printable(full) + "' " + fault + " (unsafe name)");
    if (!z.index.emplace(full, static_cast<zip_uint64_t>(i)).second)
      throw z.error("part name '" + printable(full) + "' is in the archive twice (duplicate name)");
    names_.push_back(full);
  }
}

ZipArchive::~ZipArchive() = default;

bool ZipArchive::has(const std::string& name) const { return impl_->index.count(name) != 0; }

std::string ZipArchive::read(const std::string& name) {
  Impl& z = *impl_;
  const auto found = z.index.find(name);
  if (found == z.index.end()) throw z.error("no part '" + printable(name) + "'");
  const std::string part = "part '" + printable(name) + "'";
  zip_stat_t stat;
  zip_stat_init(&stat);
  if (zip_stat_index(z.zip, found->second, 0, &stat) != 0)
    throw z.error(part + " cannot be read (" + zip_strerror(z.zip) + ")");
  const uint64_t packed = (stat.valid & ZIP_STAT_COMP_SIZE) ? stat.comp_size : 0;
  if ((stat.valid & ZIP_STAT_SIZE) && stat.size > z.limits.max_part_bytes)
    throw z.error(part + " inflates past " + size_text(z.limits.max_part_bytes) + " (limit max_part_bytes)");

  zip_file_t* file = zip_fopen_index(z.zip, found->second, 0);
  if (!file) throw z.error(part + " cannot be read (" + zip_strerror(z.zip) + ")");
  struct Closer {
    zip_file_t* file;
    ~Closer() { zip_fclose(file); }
  } closer{file};

  std::string out;
  std::string chunk(kChunk, '\0');
  for (;;) {
    const zip_int64_t n = zip_fread(file, chunk.data(), chunk.size());
    if (n < 0) throw z.error(part + " cannot be read (" + zip_file_strerror(file) + ")");
    if (n == 0) break;
    const size_t got = out.size() + static_cast<size_t>(n);
    if (got > z.limits.max_part_bytes)
      throw z.error(part + " inflates past " + size_text(z.limits.max_part_bytes) + " (limit max_part_bytes)");
    if (got > z.limits.max_unpacked_bytes - std::min(unpacked_, z.limits.max_unpacked_bytes))
      throw z.error(part + " takes the parts read past " + size_text(z.limits.max_unpacked_bytes) +
                    " (limit max_unpacked_bytes)");
    if (got > kMiB && got / std::max<uint64_t>(packed, 1) > z.limits.max_compression_ratio)
      throw z.error(part + " inflates more than " + std::to_string(z.limits.max_compression_ratio) +
                    " times its packed size (limit max_compression_ratio)");
    out.append(chunk.data(), static_cast<size_t>(n));
  }
  unpacked_ += out.size();
  return out;
}

void ZipArchive::replace(const std::string& name, std::string bytes) { replaced_[name] = std::move(bytes); }

std::string ZipArchive::write() const {
  const Impl& z = *impl_;
  if (replaced_.empty()) return z.bytes;
  zip_error_t error;
  zip_error_init(&error);
  // libzip writes into (and may free parts of) the buffer it is given: a copy of its own.
  void* copy = std::malloc(std::max<size_t>(z.bytes.size(), 1));
  if (!copy) throw z.error("cannot write the archive (out of memory)");
  std::memcpy(copy, z.bytes.data(), z.bytes.size());
  zip_source_t* target = zip_source_buffer_create(copy, z.bytes.size(), 1, &error);
  if (!target) {
    std::free(copy);
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    throw z.error("cannot write the archive (" + text + ")");
  }
  zip_t* zip = zip_open_from_source(target, 0, &error);
  if (!zip) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    zip_source_free(target);
    throw z.error("cannot write the archive (" + text + ")");
  }
  zip_error_fini(&error);
  zip_source_keep(target);  // read back after zip_close has written into it
  struct Guard {
    zip_t* zip;
    zip_source_t* target;
    ~Guard() {
      if (zip) zip_discard(zip);
      zip_source_free(target);
    }
  } guard{zip, target};

  for (const auto& [name, bytes] : replaced_) {
    zip_source_t* part = zip_source_buffer(zip, bytes.data(), bytes.size(), 0);
    if (!part) throw z.error("part '" + printable(name) + "' cannot be written (" + zip_strerror(zip) + ")");
    const auto found = z.index.find(name);
    zip_int64_t index = 0;
    if (found != z.index.end()) {
      index = static_cast<zip_int64_t>(found->second);
      if (zip_file_replace(zip, found->second, part, 0) != 0) {
        zip_source_free(part);
        throw z.error("part '" + printable(name) + "' cannot be written (" + zip_strerror(zip) + ")");
      }
    } else {
      index = zip_file_add(zip, name.c_str(), part, 0);
      if (index < 0) {
        zip_source_free(part);
        throw z.error("part '" + printable(name) + "' cannot be written (" + zip_strerror(zip) + ")");
      }
    }
    // The part keeps its time: the same translation gives the same archive.
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (found != z.index.end() && zip_stat_index(z.zip, found->second, 0, &stat) == 0 && (stat.valid & ZIP_STAT_MTIME))
      zip_file_set_mtime(zip, static_cast<zip_uint64_t>(index), stat.mtime, 0);
  }
  if (zip_close(zip) != 0) throw z.error("cannot write the archive (" + std::string(zip_strerror(zip)) + ")");
  guard.zip = nullptr;

  if (zip_source_open(target) != 0)
    throw z.error("cannot write the archive (" + std::string(zip_error_strerror(zip_source_error(target))) + ")");
  std::string out;
  std::string chunk(kChunk, '\0');
  for (;;) {
    const zip_int64_t n = zip_source_read(target, chunk.data(), chunk.size());
    if (n < 0) {
      const std::string text = zip_error_strerror(zip_source_error(target));
      zip_source_close(target);
      throw z.error("cannot write the archive (" + text + ")");
    }
    if (n == 0) break;
    out.append(chunk.data(), static_cast<size_t>(n));
  }
  zip_source_close(target);
  return out;
}

}  // namespace ordo::document
