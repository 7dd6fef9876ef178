// Zip archives (Office Open XML, OpenDocument, EPUB) through libzip, within FileLimits: the
// central directory is checked before anything is inflated (entry count; names: no absolute
// path, no "..", no backslash, no NUL, no duplicate), and a part is inflated with its bytes
// counted as they come (a part past max_part_bytes, the parts read past max_unpacked_bytes, or
// one inflating more than max_compression_ratio times its packed size stops there: a zip bomb
// never fills memory or disk). Written back, every part not replaced is copied as it was
// (compressed bytes, order, names, times); replaced ones are deflated anew.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ordo/files.h"

namespace ordo::document {

class ZipArchive {
 public:
  // `what` names the file in errors ("DOCX file"). Throws ordo::Error when `bytes` is not a
  // zip archive or its directory breaks a rule above.
  ZipArchive(const std::string& bytes, const FileLimits& limits, const std::string& what);
  ~ZipArchive();
  ZipArchive(const ZipArchive&) = delete;
  ZipArchive& operator=(const ZipArchive&) = delete;

  // The part names, in archive order.
  const std::vector<std::string>& names() const { return names_; }
  bool has(const std::string& name) const;
  // A part's bytes, unpacked within the limits; throws ordo::Error naming the part.
  std::string read(const std::string& name);
  // Replaces a part's bytes in what write() gives.
  void replace(const std::string& name, std::string bytes);
  // The archive with the replaced parts; the others as they were.
  std::string write() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<std::string> names_;
  std::map<std::string, std::string> replaced_;
  size_t unpacked_ = 0;
};

}  // namespace ordo::document
