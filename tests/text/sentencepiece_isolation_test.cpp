// SentencePiece beside LibTorch: this binary links LibTorch, so LibTorch's libprotobuf 3.21 is
// in the process while the shim's SentencePiece uses its embedded protobuf-lite 3.14. Loading,
// encoding on several threads and training in process must all work (the shim is in a
// link-map namespace of its own: src/text/sentencepiece_shim.h).
// ctest-label: unit
#include <link.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "support/errors.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "text/sentencepiece.h"
#include "text/tokenizer.h"

namespace ordo::text {
namespace {

using ordo::testing::error_of;
using ordo::testing::TempDir;

bool libprotobuf_loaded() {
  bool found = false;
  ::dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        if (info->dlpi_name && std::string(info->dlpi_name).find("libprotobuf.so") != std::string::npos)
          *static_cast<bool*>(data) = true;
        return 0;
      },
      &found);
  return found;
}

TEST(SentencePieceIsolation, EncodesOnSeveralThreadsBesideLibTorchsProtobuf) {
  ASSERT_TRUE(libprotobuf_loaded()) << "this test means something only with LibTorch's libprotobuf loaded";
  const auto tokenizer = load_marian_tokenizer(ordo::testing::fixture_dir("marian_opus_en_mg"), false);
  const std::vector<int64_t> expected = tokenizer->encode("The quick brown fox jumps over the lazy dog.");
  std::vector<std::thread> threads;
  std::vector<int> mismatches(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i)
        mismatches[t] += tokenizer->encode("The quick brown fox jumps over the lazy dog.") != expected;
    });
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

// The trainer runs in this process with spm_train's options (it crashed under the former
// RTLD_DEEPBIND loading, so ordo-train used to spawn Debian's spm_train), and its model loads back.
TEST(SentencePieceIsolation, TrainsInProcessLikeSpmTrain) {
  ASSERT_TRUE(libprotobuf_loaded());
  TempDir dir;
  {
    std::ifstream in(std::string(ORDO_TEST_DATA_DIR) + "/samples/multi30k_val100.en");
    std::ofstream out(dir.file("corpus with space.txt"));
    out << in.rdbuf();
  }
  train_sentencepiece({"--input=" + dir.file("corpus with space.txt"), "--model_prefix=" + dir.file("spm"),
                       "--vocab_size=200", "--model_type=unigram", "--character_coverage=1.0", "--eos_id=0",
                       "--unk_id=1", "--bos_id=-1", "--pad_id=-1", "--minloglevel=2"});
  const SentencePiece spm(dir.file("spm.model"));
  EXPECT_EQ(spm.size(), 200);
  EXPECT_EQ(spm.id_to_piece(0), "</s>");
  EXPECT_EQ(spm.id_to_piece(1), "<unk>");
  const std::string text = "A man is riding a bicycle.";
  EXPECT_EQ(spm.decode(spm.encode(text)), text);

  const std::string missing = error_of([&] {
    train_sentencepiece({"--input=" + dir.file("missing.txt"), "--model_prefix=" + dir.file("x"), "--minloglevel=2"});
  });
  EXPECT_NE(missing.find("SentencePiece training failed"), std::string::npos) << missing;
  EXPECT_NE(error_of([&] { train_sentencepiece({"vocab_size"}); }).find("--key=value"), std::string::npos);
}

}  // namespace
}  // namespace ordo::text
