// io::VerifiedFile (src/io/verified_file.h), the container of the packed weights cache: what it
// writes reads back whole and page-aligned; any changed byte, any truncation or growth, a FIFO
// or a directory in its place, an oversized file are refused with a message naming the file,
// never read as good data and never waited on.
// ctest-label: unit
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include <gtest/gtest.h>

#include "io/verified_file.h"
#include "ordo/error.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

const std::string kMagic = "TESTFILE";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void overwrite(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// The error of reading `path` ("" if it reads).
std::string read_error(const std::string& path, size_t max_bytes = size_t{1} << 30) {
  try {
    io::read_verified_file(path, kMagic, max_bytes);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A file of two parts (5000 and 3 bytes) and a header naming them.
std::string write_sample(const testing::TempDir& dir, std::vector<uint8_t>& a, std::vector<uint8_t>& b) {
  a.resize(5000);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 7 + 1);
  b = {1, 2, 3};
  io::VerifiedFileWriter writer;
  const nlohmann::json header = {{"a", writer.add(a.data(), a.size())}, {"b", writer.add(b.data(), b.size())}};
  const std::string path = dir.file("sample.bin");
  writer.write(path, kMagic, header);
  return path;
}

TEST(VerifiedFile, ChecksumIsXxh3OfTheBytes) {
  // XXH3-64 with seed 0 (the published test vector of the empty input): files written by one
  // build stay readable by the next only if the algorithm never changes.
  EXPECT_EQ(io::verified_checksum("", 0), 0x2D06800538D394C2ull);
  const std::string text = "ordo";
  EXPECT_NE(io::verified_checksum(text.data(), text.size()), io::verified_checksum("ordp", 4));
}

// The sample file, written and read back.
class VerifiedFileSample : public ::testing::Test {
 protected:
  void SetUp() override { file_ = io::read_verified_file(path_, kMagic, 1 << 20); }
  // Part `name`'s bytes in the file read, checked to be `expected` long.
  const uint8_t* part(const char* name, const std::vector<uint8_t>& expected) {
    size_t bytes = 0;
    const uint8_t* p = file_.part(file_.header.at(name), &bytes);
    EXPECT_EQ(bytes, expected.size()) << name;
    return bytes == expected.size() ? p : nullptr;
  }
  testing::TempDir dir_;
  std::vector<uint8_t> a_, b_;
  const std::string path_ = write_sample(dir_, a_, b_);
  io::VerifiedFile file_;
};

TEST_F(VerifiedFileSample, EachPartReadsBackWhole) {
  const uint8_t* pa = part("a", a_);
  ASSERT_NE(pa, nullptr);
  EXPECT_EQ(std::memcmp(pa, a_.data(), a_.size()), 0);
  const uint8_t* pb = part("b", b_);
  ASSERT_NE(pb, nullptr);
  EXPECT_EQ(std::memcmp(pb, b_.data(), b_.size()), 0);
}

TEST_F(VerifiedFileSample, TheDataAndEachPartArePageAligned) {
  EXPECT_EQ(reinterpret_cast<uintptr_t>(file_.data.get()) % io::kVerifiedFileAlign, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(part("a", a_)) % io::kVerifiedFileAlign, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(part("b", b_)) % io::kVerifiedFileAlign, 0u);
}

TEST_F(VerifiedFileSample, TheChecksumIsTheLast8BytesOverEveryByteBefore) {
  const std::string content = read(path_);
  uint64_t stored = 0;
  for (int i = 7; i >= 0; --i) stored = (stored << 8) | static_cast<uint8_t>(content[content.size() - 8 + i]);
  EXPECT_EQ(stored, io::verified_checksum(content.data(), content.size() - 8));
}

TEST_F(VerifiedFileSample, NoTemporaryFileIsLeftBesideIt) {
  EXPECT_EQ(std::system(("test $(ls '" + dir_.path() + "' | wc -l) -eq 1").c_str()), 0);
}

TEST_F(VerifiedFileSample, ARangeOutsideTheDataIsRefusedNotRead) {
  size_t bytes = 0;
  EXPECT_THROW(file_.part(nlohmann::json::array({8190, 100}), &bytes), Error);
  EXPECT_THROW(file_.part(nlohmann::json::array({-1, 1}), &bytes), Error);
  EXPECT_THROW(file_.part(nlohmann::json("x"), &bytes), Error);
}

TEST(VerifiedFile, EveryChangedByteIsRefused) {
  testing::TempDir dir;
  std::vector<uint8_t> a, b;
  const std::string path = write_sample(dir, a, b);
  const std::string good = read(path);
  ASSERT_EQ(read_error(path), "");
  // Every byte of the preamble, header and checksum, and a stride through the padding and data.
  for (size_t at = 0; at < good.size(); at += at < 128 || at + 16 > good.size() ? 1 : 61) {
    std::string bad = good;
    bad[at] = static_cast<char>(bad[at] ^ 0x20);
    overwrite(path, bad);
    const std::string error = read_error(path);
    EXPECT_NE(error, "") << "byte " << at << " changed and the file still reads";
    EXPECT_NE(error.find(path), std::string::npos) << error;
  }
  // A block of NaN or zeros of the right size in the data: the checksum, not the size, finds it.
  for (const char fill : {'\0', '\x7f'}) {
    std::string bad = good;
    bad.replace(4096 + 100, 1024, 1024, fill);
    overwrite(path, bad);
    EXPECT_NE(read_error(path).find("checksum mismatch"), std::string::npos) << read_error(path);
  }
}

TEST(VerifiedFile, TruncatedOrGrownFilesAreRefused) {
  testing::TempDir dir;
  std::vector<uint8_t> a, b;
  const std::string path = write_sample(dir, a, b);
  const std::string good = read(path);
  for (const size_t size :
       {size_t{0}, size_t{7}, size_t{31}, size_t{4096}, good.size() / 2, good.size() - 8, good.size() - 1}) {
    overwrite(path, good.substr(0, size));
    const std::string error = read_error(path);
    EXPECT_NE(error.find(path + ": truncated"), std::string::npos) << size << ": " << error;
  }
  overwrite(path, good + "x");
  EXPECT_NE(read_error(path).find("appended to"), std::string::npos) << read_error(path);
  overwrite(path, good);
  EXPECT_NE(read_error(path, good.size() - 1).find("more than"), std::string::npos);
  std::string other = good;
  other.replace(0, 8, "OTHERMAG");
  overwrite(path, other);
  EXPECT_NE(read_error(path).find("wrong magic"), std::string::npos) << read_error(path);
}

TEST(VerifiedFile, AFifoIsRefusedWithoutWaiting) {
  testing::TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::string error = read_error(fifo);  // nobody ever writes to it: a blocking open would hang
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_NE(error.find("FIFO"), std::string::npos) << error;
}

TEST(VerifiedFile, ADirectoryIsRefused) {
  testing::TempDir dir;
  EXPECT_NE(read_error(dir.path()).find("directory"), std::string::npos) << read_error(dir.path());
}

TEST(VerifiedFile, AMissingFileIsNamed) {
  testing::TempDir dir;
  EXPECT_NE(read_error(dir.file("missing")).find(dir.file("missing")), std::string::npos);
}

// A file read on several threads (consecutive shares at once, io::read_verified_file's
// `threads`) gives the same bytes, and a byte changed in any share, the last included, fails
// its checksum as it does on one thread.
// A file of one 9 MB part (several 2 MB shares for the reading threads).
class VerifiedFileOnThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    big_.resize(size_t{9} << 20);
    uint32_t state = 7;
    for (uint8_t& byte : big_) byte = static_cast<uint8_t>((state = state * 1664525u + 1013904223u) >> 24);
    io::VerifiedFileWriter writer;
    const nlohmann::json header = {{"big", writer.add(big_.data(), big_.size())}};
    writer.write(path_, kMagic, header);
    good_ = read(path_);
  }
  testing::TempDir dir_;
  const std::string path_ = dir_.file("big.bin");
  std::vector<uint8_t> big_;
  std::string good_;  // the file's bytes
};

TEST_F(VerifiedFileOnThreads, ReadOnAnyNumberOfThreadsGivesTheSameBytes) {
  for (const int threads : {1, 2, 3, 8}) {
    const io::VerifiedFile file = io::read_verified_file(path_, kMagic, size_t{1} << 30, threads);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(file.data.get()) % io::kVerifiedFileAlign, 0u);
    size_t bytes = 0;
    const uint8_t* part = file.part(file.header.at("big"), &bytes);
    ASSERT_EQ(bytes, big_.size());
    EXPECT_EQ(std::memcmp(part, big_.data(), big_.size()), 0) << threads << " threads";
  }
}

TEST_F(VerifiedFileOnThreads, AChangedByteInAnyThreadsShareIsAChecksumMismatch) {
  for (const int threads : {1, 2, 3, 8}) {
    for (const size_t at : {size_t{5000}, good_.size() / 3, good_.size() / 2 + 1, good_.size() - 9}) {
      std::string bad = good_;
      bad[at] = static_cast<char>(bad[at] ^ 1);
      overwrite(path_, bad);
      std::string error;
      try {
        io::read_verified_file(path_, kMagic, size_t{1} << 30, threads);
      } catch (const Error& e) {
        error = e.what();
      }
      EXPECT_NE(error.find("checksum mismatch"), std::string::npos)
          << threads << " threads, byte " << at << ": " << error;
    }
  }
}

TEST(VerifiedFile, AFailedWriteLeavesNothingBehind) {
  testing::TempDir dir;
  const std::vector<uint8_t> data(100, 1);
  io::VerifiedFileWriter writer;
  const nlohmann::json header = {{"x", writer.add(data.data(), data.size())}};
  EXPECT_THROW(writer.write(dir.file("no/such/folder/file"), kMagic, header), Error);
  ASSERT_EQ(::mkdir(dir.file("readonly").c_str(), 0555), 0);
  if (::geteuid() != 0) EXPECT_THROW(writer.write(dir.file("readonly/file"), kMagic, header), Error);
  EXPECT_EQ(std::system(("test -z \"$(ls -A '" + dir.file("readonly") + "')\"").c_str()), 0);
  // A directory where the file goes: the rename fails, the temporary file is removed.
  ASSERT_EQ(::mkdir(dir.file("taken").c_str(), 0755), 0);
  ASSERT_EQ(::mkdir(dir.file("taken/x").c_str(), 0755), 0);
  EXPECT_THROW(writer.write(dir.file("taken"), kMagic, header), Error);
  EXPECT_EQ(std::system(("test $(ls '" + dir.path() + "' | wc -l) -eq 2").c_str()), 0);
}

}  // namespace
}  // namespace ordo
