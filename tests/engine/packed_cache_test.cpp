// The packed weights cache (models/packed_cache.h): a model restored from the cache computes
// bit for bit what the freshly packed one does, in every compute type and family; a hit does
// not rewrite the file; a changed checkpoint, a truncated or corrupt file, or another compute
// type never reads a wrong file; the cache can be turned off; small checkpoints are not cached.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

#include "io/model_config.h"
#include "models/family.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "ordo/ordo.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"

namespace ordo {
namespace {

using testing::fixture_dir;

std::shared_ptr<models::Seq2SeqModel> load(const std::string& dir, nn::GemmType type,
                                           const models::PackedCacheOptions* cache) {
  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  models::FamilySpec family = models::family_for(config);
  return models::Seq2SeqModel::load(dir, std::move(config), std::move(family), type, cache);
}

// Logits of a few decoding steps over a fixed batch: what a translation depends on.
at::Tensor logits(models::Seq2SeqModel& model) {
  at::InferenceMode guard;
  const int64_t vocab = model.config().vocab_size;
  const at::Tensor ids = at::tensor({5, 9, 14, 3, 0, 7, 11, 2, 6, 0}, at::kLong).remainder(vocab - 1).view({2, 5});
  const at::Tensor mask = at::ones_like(ids);
  nn::DecoderState state = model.start_decoding(model.encode(ids, mask), mask);
  at::Tensor step = at::full({2, 1}, model.config().decoder_start_token_id, at::kLong);
  std::vector<at::Tensor> out;
  for (int i = 0; i < 3; ++i) {
    out.push_back(model.next_logits(step, state));
    step = out.back().argmax(-1, true);
  }
  return at::stack(out);
}

std::vector<std::string> cache_files(const std::string& dir) {
  std::vector<std::string> files;
  const std::string listing = dir + "/listing";
  std::system(("ls '" + dir + "' 2>/dev/null | grep ordo-packed > '" + listing + "'").c_str());
  std::ifstream in(listing);
  for (std::string line; std::getline(in, line);) files.push_back(line);
  return files;
}

int64_t mtime_ns(const std::string& path) {
  struct stat st;
  ::stat(path.c_str(), &st);
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

class PackedCache : public ::testing::TestWithParam<std::tuple<std::string, nn::GemmType>> {};

TEST_P(PackedCache, RestoredModelComputesTheSameBits) {
  const auto& [fixture, type] = GetParam();
  if (!nn::gemm_type_supported(type)) GTEST_SKIP() << "no oneDNN kernel for this compute type on this CPU";
  testing::TempDir tmp;
  models::PackedCacheOptions cache;
  cache.dir = tmp.file("cache");
  cache.min_checkpoint_bytes = 0;
  const auto packed = load(fixture_dir(fixture), type, &cache);  // a miss: packs and saves
  const std::vector<std::string> files = cache_files(cache.dir);
  ASSERT_EQ(files.size(), 1u);
  const std::string file = cache.dir + "/" + files[0];
  const int64_t written = mtime_ns(file);

  io::ModelConfig config = io::load_model_config(fixture_dir(fixture) + "/config.json");
  models::Seq2SeqModel fresh(config, models::family_for(config));
  ASSERT_TRUE(models::restore_packed(file, fresh, type));
  EXPECT_TRUE(at::equal(logits(fresh), logits(*packed)));

  const auto hit = load(fixture_dir(fixture), type, &cache);
  EXPECT_TRUE(at::equal(logits(*hit), logits(*packed)));
  EXPECT_EQ(mtime_ns(file), written) << "a hit rewrote the file";
  EXPECT_EQ(cache_files(cache.dir).size(), 1u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, PackedCache,
                         ::testing::Combine(::testing::Values("marian_opus_en_mg", "marian_sep_en_mg", "pegasus", "nllb",
                                                              "fsmt"),
                                            ::testing::Values(nn::GemmType::kFloat32, nn::GemmType::kBFloat16,
                                                              nn::GemmType::kInt8)),
                         [](const auto& info) {
                           const nn::GemmType t = std::get<1>(info.param);
                           return std::get<0>(info.param) + (t == nn::GemmType::kInt8       ? "_int8"
                                                             : t == nn::GemmType::kBFloat16 ? "_bfloat16"
                                                                                            : "_float32");
                         });

TEST(PackedCacheFiles, AChangedCheckpointIsPackedAfresh) {
  testing::TempDir tmp;
  const std::string model = tmp.file("model");
  std::system(("cp -r '" + fixture_dir("marian_opus_en_mg") + "' '" + model + "'").c_str());
  models::PackedCacheOptions cache;
  cache.dir = tmp.file("cache");
  cache.min_checkpoint_bytes = 0;
  const at::Tensor before = logits(*load(model, nn::GemmType::kFloat32, &cache));
  ASSERT_EQ(cache_files(cache.dir).size(), 1u);

  // Same size, same date resolution, other bytes: the last byte of the file's last tensor.
  {
    std::fstream f(model + "/model.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-2, std::ios::end);
    char c;
    f.get(c);
    f.seekp(-2, std::ios::end);
    f.put(static_cast<char>(c ^ 0x01));
  }
  const at::Tensor uncached = logits(*load(model, nn::GemmType::kFloat32, nullptr));
  const at::Tensor after = logits(*load(model, nn::GemmType::kFloat32, &cache));
  EXPECT_TRUE(at::equal(after, uncached));
  EXPECT_FALSE(at::equal(after, before)) << "the changed weight did not change the logits";
  EXPECT_EQ(cache_files(cache.dir).size(), 2u);
}

TEST(PackedCacheFiles, TruncatedCorruptOrForeignFilesAreNotUsed) {
  testing::TempDir tmp;
  models::PackedCacheOptions cache;
  cache.dir = tmp.file("cache");
  cache.min_checkpoint_bytes = 0;
  const std::string dir = fixture_dir("marian_opus_en_mg");
  const at::Tensor expected = logits(*load(dir, nn::GemmType::kInt8, &cache));
  const std::string file = cache.dir + "/" + cache_files(cache.dir).at(0);
  std::ifstream in(file, std::ios::binary);
  const std::string good((std::istreambuf_iterator<char>(in)), {});

  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  const auto restores = [&](const std::string& content, nn::GemmType type = nn::GemmType::kInt8) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    models::Seq2SeqModel fresh(config, models::family_for(config));
    return models::restore_packed(file, fresh, type);
  };
  EXPECT_TRUE(restores(good));
  EXPECT_FALSE(restores(good.substr(0, good.size() - 1)));  // truncated by one byte
  EXPECT_FALSE(restores(good.substr(0, good.size() / 2)));
  EXPECT_FALSE(restores(good.substr(0, 12)));
  EXPECT_FALSE(restores(""));
  EXPECT_FALSE(restores(good + "x"));
  std::string corrupt = good;
  corrupt[20] = '#';  // inside the JSON header
  EXPECT_FALSE(restores(corrupt));
  corrupt = good;
  corrupt.replace(0, 8, "ORDOPACX");
  EXPECT_FALSE(restores(corrupt));
  EXPECT_FALSE(restores(good, nn::GemmType::kFloat32));  // made for another compute type

  // Loading over a truncated file packs afresh, gives the right model and repairs the file.
  std::ofstream(file, std::ios::binary | std::ios::trunc) << good.substr(0, good.size() / 3);
  EXPECT_TRUE(at::equal(logits(*load(dir, nn::GemmType::kInt8, &cache)), expected));
  std::ifstream again(file, std::ios::binary);
  const std::string repaired((std::istreambuf_iterator<char>(again)), {});
  EXPECT_EQ(repaired.size(), good.size());
  models::Seq2SeqModel fresh(config, models::family_for(config));
  ASSERT_TRUE(models::restore_packed(file, fresh, nn::GemmType::kInt8));
  EXPECT_TRUE(at::equal(logits(fresh), expected));
}

TEST(PackedCacheFiles, OffSmallOrPerComputeType) {
  testing::TempDir tmp;
  const std::string dir = fixture_dir("marian_opus_en_mg");
  models::PackedCacheOptions cache;
  cache.dir = tmp.file("cache");
  cache.min_checkpoint_bytes = 0;
  cache.enabled = false;
  load(dir, nn::GemmType::kFloat32, &cache);
  EXPECT_TRUE(cache_files(cache.dir).empty());
  cache.enabled = true;
  ::setenv("ORDO_WEIGHT_CACHE", "0", 1);
  load(dir, nn::GemmType::kFloat32, &cache);
  ::unsetenv("ORDO_WEIGHT_CACHE");
  EXPECT_TRUE(cache_files(cache.dir).empty());
  cache.min_checkpoint_bytes = 64 << 20;  // the default: the fixture is far smaller
  load(dir, nn::GemmType::kFloat32, &cache);
  EXPECT_TRUE(cache_files(cache.dir).empty());
  cache.min_checkpoint_bytes = 0;
  load(dir, nn::GemmType::kFloat32, &cache);
  load(dir, nn::GemmType::kBFloat16, &cache);
  EXPECT_EQ(cache_files(cache.dir).size(), 2u);
  // Through the public API: the same options, the same files.
  ModelOptions options;
  options.weight_cache_dir = tmp.file("api");
  options.compute_type = ComputeType::kBFloat16;
  Translator translator(dir, options);  // 64 MB threshold: not cached
  EXPECT_TRUE(cache_files(tmp.file("api")).empty());
}

}  // namespace
}  // namespace ordo
