// ctest-label: unit
// Zip archives within FileLimits (src/document/zip_archive.cpp): archives are made here in memory
// with libzip (a bomb is a few KB deflated), some then patched byte by byte into what no honest
// zip writer makes (a NUL in a name, a duplicate name, a size that lies). Every hostile archive
// is an ordo::Error naming the file, the part and the limit or fault; parts not replaced come
// back with their compressed bytes as they were.
#include <zip.h>

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "document/zip_archive.h"
#include "files/file_test_support.h"
#include "ordo/error.h"

namespace ordo::document {
namespace {

using namespace ordo::testing;

struct Entry {
  std::string name, bytes;
  bool stored = false;
};

// A zip archive of `entries`, written by libzip into memory.
std::string make_zip(const std::vector<Entry>& entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* target = zip_source_buffer_create(nullptr, 0, 0, &error);
  zip_t* zip = zip_open_from_source(target, ZIP_TRUNCATE, &error);
  EXPECT_NE(zip, nullptr);
  zip_source_keep(target);
  for (const Entry& entry : entries) {
    zip_source_t* part = zip_source_buffer(zip, entry.bytes.data(), entry.bytes.size(), 0);
    const zip_int64_t index = zip_file_add(zip, entry.name.c_str(), part, ZIP_FL_ENC_RAW);
    EXPECT_GE(index, 0) << entry.name;
    zip_set_file_compression(zip, static_cast<zip_uint64_t>(index), entry.stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 9);
    zip_file_set_mtime(zip, static_cast<zip_uint64_t>(index), 1767225600, 0);
  }
  EXPECT_EQ(zip_close(zip), 0);
  std::string out;
  EXPECT_EQ(zip_source_open(target), 0);
  char chunk[4096];
  for (zip_int64_t n; (n = zip_source_read(target, chunk, sizeof chunk)) > 0;)
    out.append(chunk, static_cast<size_t>(n));
  zip_source_close(target);
  zip_source_free(target);
  zip_error_fini(&error);
  return out;
}

// Replaces every `from` in the archive's bytes (local and central headers alike) by `to`.
std::string patch(std::string bytes, const std::string& from, const std::string& to) {
  for (size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size()))
    bytes.replace(at, from.size(), to);
  return bytes;
}

// The compressed bytes of a part as the archive stores them.
std::string raw_part(const std::string& archive, const std::string& name) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(archive.data(), archive.size(), 0, &error);
  zip_t* zip = zip_open_from_source(source, ZIP_RDONLY, &error);
  zip_error_fini(&error);
  if (!zip) {
    zip_source_free(source);
    return "";
  }
  std::string out;
  if (zip_file_t* file = zip_fopen(zip, name.c_str(), ZIP_FL_COMPRESSED)) {
    char chunk[4096];
    for (zip_int64_t n; (n = zip_fread(file, chunk, sizeof chunk)) > 0;) out.append(chunk, static_cast<size_t>(n));
    zip_fclose(file);
  }
  zip_discard(zip);
  return out;
}

TEST(ZipArchive, ReadsItsPartsInArchiveOrder) {
  ZipArchive zip(make_zip({{"b.xml", "<b/>"}, {"a/c.txt", "hello", true}}), {}, "DOCX file");
  EXPECT_EQ(zip.names(), (std::vector<std::string>{"b.xml", "a/c.txt"}));
  EXPECT_TRUE(zip.has("a/c.txt"));
  EXPECT_FALSE(zip.has("c.txt"));
  EXPECT_EQ(zip.read("b.xml"), "<b/>");
  EXPECT_EQ(zip.read("a/c.txt"), "hello");
}

TEST(ZipArchive, AMissingPartIsAnErrorNamingIt) {
  ZipArchive zip(make_zip({{"b.xml", "<b/>"}}), {}, "DOCX file");
  EXPECT_TRUE(Contains(error_of([&] { zip.read("word/document.xml"); }), "DOCX file: no part 'word/document.xml'"));
}

TEST(ZipArchive, WritingWithoutChangesGivesTheSameBytes) {
  const std::string archive = make_zip({{"a.xml", "<a/>"}, {"b.xml", "<b/>"}});
  ZipArchive zip(archive, {}, "DOCX file");
  EXPECT_EQ(zip.write(), archive);
}

TEST(ZipArchive, PartsNotReplacedKeepTheirCompressedBytesAndOrder) {
  const std::string text(5000, 'x');
  const std::string archive =
      make_zip({{"mimetype", "application/epub+zip", true}, {"a.xml", "<a>" + text + "</a>"}, {"b.xml", "<b/>"}});
  ZipArchive zip(archive, {}, "EPUB file");
  zip.replace("a.xml", "<a>translated</a>");
  const std::string written = zip.write();
  ZipArchive again(written, {}, "EPUB file");
  EXPECT_EQ(again.names(), (std::vector<std::string>{"mimetype", "a.xml", "b.xml"}));
  EXPECT_EQ(again.read("a.xml"), "<a>translated</a>");
  EXPECT_EQ(again.read("b.xml"), "<b/>");
  EXPECT_EQ(raw_part(written, "mimetype"), "application/epub+zip");  // still stored, not deflated
  EXPECT_EQ(raw_part(written, "b.xml"), raw_part(archive, "b.xml"));
}

TEST(ZipArchive, TheSameReplacementGivesTheSameArchive) {
  const std::string archive = make_zip({{"a.xml", "<a/>"}, {"b.xml", "<b/>"}});
  ZipArchive first(archive, {}, "DOCX file"), second(archive, {}, "DOCX file");
  first.replace("a.xml", "<a>x</a>");
  second.replace("a.xml", "<a>x</a>");
  EXPECT_EQ(first.write(), second.write());
}

TEST(ZipArchive, APartInflatingPastMaxPartBytesStopsThere) {
  FileLimits limits;
  limits.max_part_bytes = 1 << 20;
  ZipArchive zip(make_zip({{"word/document.xml", std::string(8 << 20, ' ')}}), limits, "DOCX file");
  EXPECT_TRUE(Contains(error_of([&] { zip.read("word/document.xml"); }),
                       "DOCX file: part 'word/document.xml' inflates past 1 MiB (limit max_part_bytes)"));
}

TEST(ZipArchive, ADeclaredSizeThatLiesDoesNotLetABombThrough) {
  FileLimits limits;
  limits.max_part_bytes = 1 << 20;
  // 8 MiB of spaces declared as 16 bytes in both headers.
  std::string archive = make_zip({{"bomb.xml", std::string(8 << 20, ' ')}});
  const std::string declared("\x00\x00\x80\x00", 4);
  ASSERT_NE(archive.find(declared), std::string::npos);
  archive = patch(archive, declared, std::string("\x10\x00\x00\x00", 4));
  std::string message;
  try {
    ZipArchive zip(archive, limits, "DOCX file");
    const std::string part = zip.read("bomb.xml");
    EXPECT_LE(part.size(), limits.max_part_bytes);
    message = "(read " + std::to_string(part.size()) + " bytes)";
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_TRUE(Contains(message, "DOCX file: "));
}

TEST(ZipArchive, APartPastMaxCompressionRatioIsRefused) {
  FileLimits limits;
  limits.max_compression_ratio = 10;
  ZipArchive zip(make_zip({{"content.xml", std::string(4 << 20, 'a')}}), limits, "ODT file");
  EXPECT_TRUE(Contains(error_of([&] { zip.read("content.xml"); }),
                       "ODT file: part 'content.xml' inflates more than 10 times its packed size "
                       "(limit max_compression_ratio)"));
}

TEST(ZipArchive, ThePartsReadTogetherStayUnderMaxUnpackedBytes) {
  FileLimits limits;
  limits.max_unpacked_bytes = 1 << 20;
  ZipArchive zip(make_zip({{"a.xml", std::string(600 << 10, 'a')}, {"b.xml", std::string(600 << 10, 'b')}}), limits,
                 "XLSX file");
  EXPECT_EQ(zip.read("a.xml").size(), size_t{600} << 10);
  EXPECT_TRUE(Contains(error_of([&] { zip.read("b.xml"); }),
                       "XLSX file: part 'b.xml' takes the parts read past 1 MiB (limit max_unpacked_bytes)"));
}

TEST(ZipArchive, MoreEntriesThanMaxEntriesAreRefusedBeforeReading) {
  FileLimits limits;
  limits.max_entries = 3;
  std::vector<Entry> entries;
  for (int i = 0; i < 4; ++i) entries.push_back({"part" + std::to_string(i), "x"});
  EXPECT_TRUE(Contains(error_of([&] { ZipArchive(make_zip(entries), limits, "EPUB file"); }),
                       "EPUB file: 4 parts (limit max_entries 3)"));
}

TEST(ZipArchive, AFileLargerThanMaxFileBytesIsRefused) {
  FileLimits limits;
  limits.max_file_bytes = 100;
  EXPECT_TRUE(Contains(error_of([&] {
                         ZipArchive(make_zip({{"a", std::string(500, 'q')}}), limits, "DOCX file");
                       }),
                       "(limit max_file_bytes)"));
}

TEST(ZipArchive, APathTraversalNameIsRefused) {
  EXPECT_TRUE(Contains(error_of([&] {
                         ZipArchive(make_zip({{"../../etc/passwd", "root"}}), {}, "DOCX file");
                       }),
                       "DOCX file: part name '../../etc/passwd' has a '..' component (unsafe name)"));
}

TEST(ZipArchive, AnAbsoluteNameIsRefused) {
  EXPECT_TRUE(Contains(error_of([&] {
                         ZipArchive(make_zip({{"/etc/passwd", "root"}}), {}, "DOCX file");
                       }),
                       "part name '/etc/passwd' is an absolute path (unsafe name)"));
  EXPECT_TRUE(Contains(error_of([&] {
                         ZipArchive(make_zip({{"C:/boot.ini", "x"}}), {}, "DOCX file");
                       }),
                       "is an absolute path"));
}

TEST(ZipArchive, ABackslashInANameIsRefused) {
  EXPECT_TRUE(Contains(error_of([&] {
                         ZipArchive(make_zip({{"word\\document.xml", "x"}}), {}, "DOCX file");
                       }),
                       "part name 'word\\document.xml' has a backslash (unsafe name)"));
}

TEST(ZipArchive, ANulByteInANameIsRefused) {
  const std::string archive =
      patch(make_zip({{"evil.xml_hidden", "x"}}), "evil.xml_hidden", std::string("evil.xml\0hidden", 15));
  EXPECT_TRUE(Contains(error_of([&] { ZipArchive(archive, {}, "DOCX file"); }),
                       "part name 'evil.xml\\x00hidden' has a NUL byte (unsafe name)"));
}

TEST(ZipArchive, ADuplicateNameIsRefused) {
  const std::string archive = patch(make_zip({{"a.xml", "<a/>"}, {"b.xml", "<b/>"}}), "b.xml", "a.xml");
  const std::string message = error_of([&] { ZipArchive(archive, {}, "DOCX file"); });
  EXPECT_TRUE(Contains(message, "DOCX file: "));
  EXPECT_TRUE(Contains(message, "'a.xml' is in the archive twice (duplicate name)") ||
              Contains(message, "not a zip archive"))
      << message;
}

TEST(ZipArchive, ATruncatedArchiveIsNotAZipArchive) {
  const std::string archive = make_zip({{"a.xml", std::string(3000, 'a') + "<a/>"}, {"b.xml", "<b/>"}});
  EXPECT_TRUE(Contains(error_of([&] { ZipArchive(archive.substr(0, archive.size() / 2), {}, "DOCX file"); }),
                       "DOCX file: not a zip archive ("));
  EXPECT_TRUE(Contains(error_of([&] { ZipArchive(archive.substr(0, archive.size() - 10), {}, "DOCX file"); }),
                       "DOCX file: not a zip archive ("));
}

TEST(ZipArchive, APdfIsNotAZipArchive) {
  EXPECT_TRUE(Contains(
      error_of([&] { ZipArchive("%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\n%%EOF\n", {}, "DOCX file"); }),
      "DOCX file: not a zip archive ("));
  EXPECT_TRUE(Contains(error_of([&] { ZipArchive("", {}, "PPTX file"); }), "PPTX file: not a zip archive ("));
}

TEST(ZipArchive, ADamagedPartIsAnErrorNamingIt) {
  std::string archive = make_zip({{"a.xml", std::string(20000, 'a') + "<a>the end</a>"}});
  const std::string raw = raw_part(archive, "a.xml");
  const size_t at = archive.find(raw);
  ASSERT_NE(at, std::string::npos);
  for (size_t i = 0; i < raw.size(); i += 3) archive[at + i] = static_cast<char>(archive[at + i] ^ 0x5a);
  ZipArchive zip(archive, {}, "DOCX file");
  EXPECT_TRUE(Contains(error_of([&] { zip.read("a.xml"); }), "DOCX file: part 'a.xml' cannot be read ("));
}

}  // namespace
}  // namespace ordo::document
