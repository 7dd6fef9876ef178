// The safetensors reader/writer against the fixture checkpoints and every malformed case.
// ctest-label: unit
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>

#include <gtest/gtest.h>

#include "io/safetensors.h"
#include "ordo/error.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo::io {
namespace {

using ordo::testing::error_of;

using ordo::testing::TempDir;

// A raw file: 8-byte length + header text + data bytes.
std::string raw_file(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i, n >>= 8) out[i] = static_cast<char>(n & 0xff);
  return out + header + data;
}

TEST(Safetensors, ReadsFixtureAsGoldenDescribes) {
  const auto golden = ordo::testing::load_golden("marian_opus_en_mg");
  const auto& expected = golden["checks"]["safetensors"]["tensors"];
  SafetensorsFile file(ordo::testing::fixture_dir("marian_opus_en_mg") + "/model.safetensors");
  ASSERT_EQ(file.names().size(), expected.size());
  for (const auto& [name, info] : expected.items()) {
    const TensorView& view = file.get(name);
    EXPECT_EQ(dtype_name(view.dtype), info["dtype"].get<std::string>()) << name;
    EXPECT_EQ(view.shape, info["shape"].get<std::vector<int64_t>>()) << name;
  }
  EXPECT_EQ(file.metadata().at("format"), "pt");
}

TEST(Safetensors, RoundTripsAllFloatTypes) {
  TempDir dir;
  const std::vector<float> values = {0.0f, 1.0f, -2.5f, 0.333333f, 65504.0f, 1e-6f, -0.0f, 3.14159f};
  std::vector<TensorData> tensors = {
      {"b.f32", DType::F32, {2, 4}, float32_bytes(values)},
      {"a.f16", DType::F16, {8}, float32_to_f16_bytes(values)},
      {"c.bf16", DType::BF16, {4, 2}, float32_to_bf16_bytes(values)},
  };
  write_safetensors(dir.file("m.safetensors"), tensors, {{"format", "pt"}});
  SafetensorsFile file(dir.file("m.safetensors"));
  EXPECT_EQ(file.names(), (std::vector<std::string>{"a.f16", "b.f32", "c.bf16"}));
  EXPECT_EQ(to_float32(file.get("b.f32", {2, 4})), values);
  const std::vector<float> half = to_float32(file.get("a.f16"));
  const std::vector<float> bf = to_float32(file.get("c.bf16"));
  for (size_t i = 0; i < values.size(); ++i) {
    EXPECT_NEAR(half[i], values[i], std::abs(values[i]) * 1e-3 + 1e-7) << i;
    EXPECT_NEAR(bf[i], values[i], std::abs(values[i]) * 8e-3 + 1e-8) << i;
  }
  // Exact known encodings: 1.0 = 0x3c00 in half, 0x3f80 in bfloat16.
  const auto h = float32_to_f16_bytes({1.0f, -2.0f});
  EXPECT_EQ(h[0] | (h[1] << 8), 0x3c00);
  EXPECT_EQ(h[2] | (h[3] << 8), 0xc000);
  const auto b = float32_to_bf16_bytes({1.0f});
  EXPECT_EQ(b[0] | (b[1] << 8), 0x3f80);
  EXPECT_EQ(file.metadata().at("format"), "pt");
}

// The bytes of a file of one 4-byte tensor, and its header's length (the first 8 bytes).
struct OneTensorFile {
  OneTensorFile() {
    write_safetensors(dir.file("m.safetensors"), {{"x", DType::F32, {1}, float32_bytes({2.0f})}});
    std::ifstream in(dir.file("m.safetensors"), std::ios::binary);
    content.assign((std::istreambuf_iterator<char>(in)), {});
    for (int i = 7; i >= 0; --i) header_bytes = (header_bytes << 8) | static_cast<uint8_t>(content[i]);
  }
  TempDir dir;
  std::string content;
  uint64_t header_bytes = 0;
};

TEST(Safetensors, TheHeaderEndsOnAnEightByteBoundary) {
  const OneTensorFile f;
  EXPECT_EQ((8 + f.header_bytes) % 8, 0u);
}

TEST(Safetensors, TheDataFollowsTheHeader) {
  const OneTensorFile f;
  EXPECT_EQ(f.content.size(), 8 + f.header_bytes + 4);
}

TEST(Safetensors, MissingFileNamesThePath) {
  EXPECT_NE(error_of([] {
              SafetensorsFile f("/nonexistent/model.safetensors");
            }).find("/nonexistent/model.safetensors: cannot open"),
            std::string::npos);
}

TEST(Safetensors, MalformedFilesGiveClearErrors) {
  TempDir dir;
  const std::string four_floats(16, '\0');
  const struct {
    const char* label;
    std::string content;
    const char* expected;
  } cases[] = {
      {"too short", "abc", "truncated safetensors file"},
      {"header past end", raw_file("{}", "").substr(0, 8) + "{", "exceeds the file size"},
      {"bad json", raw_file("{\"x\": {\"dtype\": ", ""), "invalid JSON"},
      {"not object", raw_file("[1,2]", ""), "not a JSON object"},
      {"unknown dtype", raw_file(R"({"x":{"dtype":"F8","shape":[4],"data_offsets":[0,16]}})", four_floats),
       "unsupported dtype 'F8'"},
      {"shape vs bytes", raw_file(R"({"x":{"dtype":"F32","shape":[5],"data_offsets":[0,16]}})", four_floats),
       "tensor 'x': shape [5] of F32 needs 20 bytes"},
      {"truncated data", raw_file(R"({"x":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})", four_floats),
       "truncated file"},
      {"overlap",
       raw_file(R"({"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},)"
                R"("y":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})",
                four_floats),
       "overlap"},
      {"missing field", raw_file(R"({"x":{"dtype":"F32","shape":[4]}})", four_floats), "data_offsets"},
      {"negative dim", raw_file(R"({"x":{"dtype":"F32","shape":[-4],"data_offsets":[0,16]}})", four_floats),
       "non-negative"},
      // 2^61 F64 elements "need" 2^64 = 0 bytes when the size wraps (found reading the code;
      // fuzzing did not reach it: tests/fuzz/regressions/safetensors/shape_bytes_wrap_to_zero).
      {"size wraps", raw_file(R"({"x":{"dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,0]}})", ""),
       "shape is too large"},
  };
  for (const auto& c : cases) {
    const std::string path = dir.write(std::string(c.label) + ".safetensors", c.content);
    const std::string message = error_of([&] { SafetensorsFile f(path); });
    EXPECT_NE(message.find(path), std::string::npos) << c.label << ": " << message;
    EXPECT_NE(message.find(c.expected), std::string::npos) << c.label << ": " << message;
  }
}

// Found by fuzzing (tests/fuzz/regressions/safetensors/zero_size_f32_tensor): converting an
// empty F32 tensor passed an empty vector's null data() to memcpy (UBSan: undefined behaviour).
TEST(Safetensors, ZeroSizeTensorsConvertToEmptyVectors) {
  TempDir dir;
  const std::string path =
      dir.write("m.safetensors", raw_file(R"({"e":{"dtype":"F32","shape":[0,4],"data_offsets":[0,0]},)"
                                          R"("h":{"dtype":"F16","shape":[0],"data_offsets":[0,0]}})",
                                          ""));
  SafetensorsFile file(path);
  EXPECT_TRUE(to_float32(file.get("e", {0, 4})).empty());
  EXPECT_TRUE(to_float32(file.get("h", {0})).empty());
}

// The NaN / infinity scan finds the first non-finite value of every float dtype, wherever it
// sits (vector body or tail), signed or not, and passes the largest finite values.
TEST(Safetensors, FirstNonFiniteFindsEveryNanAndInfinity) {
  const auto check = [](DType dtype, size_t width, uint64_t largest, std::vector<uint64_t> bad) {
    for (size_t count : {1, 3, 16, 37, 1000}) {
      std::vector<uint8_t> data(count * width);
      const auto put = [&](size_t i, uint64_t bits) { std::memcpy(data.data() + i * width, &bits, width); };
      for (size_t i = 0; i < count; ++i) put(i, i % 2 ? largest : largest | (uint64_t{1} << (8 * width - 1)));
      EXPECT_EQ(first_non_finite(dtype, data.data(), count), -1) << dtype_name(dtype) << " " << count;
      for (uint64_t value : bad)
        for (size_t at : {size_t{0}, count / 2, count - 1}) {
          put(at, value);
          EXPECT_EQ(first_non_finite(dtype, data.data(), count), static_cast<int64_t>(at))
              << dtype_name(dtype) << " " << count << " " << std::hex << value;
          put(at, largest);
        }
    }
  };
  check(DType::F32, 4, 0x7f7fffff, {0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001});
  check(DType::F16, 2, 0x7bff, {0x7c00, 0xfc00, 0x7e00, 0xfe01});
  check(DType::BF16, 2, 0x7f7f, {0x7f80, 0xff80, 0x7fc0, 0xffc1});
  check(DType::F64, 8, 0x7fefffffffffffff, {0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000});
}

TEST(Safetensors, AMissingTensorIsNamed) {
  TempDir dir;
  write_safetensors(dir.file("m.safetensors"), {{"w", DType::F32, {2, 2}, float32_bytes({1, 2, 3, 4})}});
  SafetensorsFile file(dir.file("m.safetensors"));
  EXPECT_NE(error_of([&] { file.get("v"); }).find("tensor 'v' is missing"), std::string::npos);
}

TEST(Safetensors, ATensorOfAnotherShapeIsNamedWithBothShapes) {
  TempDir dir;
  write_safetensors(dir.file("m.safetensors"), {{"w", DType::F32, {2, 2}, float32_bytes({1, 2, 3, 4})}});
  SafetensorsFile file(dir.file("m.safetensors"));
  EXPECT_NE(error_of([&] { file.get("w", {4}); }).find("tensor 'w' has shape [2, 2], expected [4]"), std::string::npos);
}

TEST(Safetensors, AnInconsistentTensorIsRefusedAndTheOldFileKept) {
  TempDir dir;
  write_safetensors(dir.file("m.safetensors"), {{"w", DType::F32, {1}, float32_bytes({7})}});
  EXPECT_THROW(write_safetensors(dir.file("m.safetensors"), {{"w", DType::F32, {3}, float32_bytes({1})}}), Error);
  SafetensorsFile file(dir.file("m.safetensors"));
  EXPECT_EQ(to_float32(file.get("w")), std::vector<float>{7});
}

// A mapped file that shrinks kills its reader with SIGBUS. read() copies from the
// file itself: the same bytes as the mapping while the file is whole, an error once cut short.
// A file of a small tensor "a" and a 4096-float tensor "z" (element i is i / 2), opened.
class SafetensorsRead : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<float> big(4096), small = {1, 2, 3};
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f;
    write_safetensors(path_,
                      {{"a", DType::F32, {3}, float32_bytes(small)}, {"z", DType::F32, {4096}, float32_bytes(big)}});
    file_ = std::make_unique<SafetensorsFile>(path_);
  }
  TempDir dir_;
  const std::string path_ = dir_.file("m.safetensors");
  std::unique_ptr<SafetensorsFile> file_;
};

TEST_F(SafetensorsRead, ARangeIsCopiedFromTheFile) {
  const TensorView& z = file_->get("z");
  std::vector<float> copy(100);
  file_->read(z, 400, 400, copy.data());
  EXPECT_EQ(std::memcmp(copy.data(), static_cast<const uint8_t*>(z.data) + 400, 400), 0);
  EXPECT_EQ(copy[0], 50.0f);
}

TEST_F(SafetensorsRead, ARangePastTheTensorIsRefused) {
  const TensorView& z = file_->get("z");
  std::vector<float> copy(2);
  EXPECT_NE(error_of([&] { file_->read(z, z.nbytes - 4, 8, copy.data()); }).find("out of range"), std::string::npos);
}

TEST_F(SafetensorsRead, AFileCutShortWhileReadIsRefusedNamingIt) {
  const TensorView& z = file_->get("z");
  ASSERT_EQ(::truncate(path_.c_str(), static_cast<off_t>(z.offset + 1000)), 0);
  std::vector<float> all(4096);
  const std::string error = error_of([&] { file_->read(z, 0, z.nbytes, all.data()); });
  EXPECT_NE(error.find(path_ + ": truncated while being read"), std::string::npos) << error;
}

TEST_F(SafetensorsRead, WhatLiesBeforeTheCutIsStillReadable) {
  ASSERT_EQ(::truncate(path_.c_str(), static_cast<off_t>(file_->get("z").offset + 1000)), 0);
  float first[3];
  file_->read(file_->get("a"), 0, sizeof(first), first);
  EXPECT_EQ(first[2], 3.0f);
}

}  // namespace
}  // namespace ordo::io
