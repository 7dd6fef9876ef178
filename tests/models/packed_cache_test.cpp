// The packed weights cache (models/packed_cache.h): a model restored from the cache computes
// bit for bit what the freshly packed one does, in every compute type and family (the long-input
// families' own parameters too: LED's global projections, LongT5's global bias and norms,
// Pegasus-X's global tokens); a hit does
// not rewrite the file; a changed checkpoint, a truncated or corrupt file, or another compute
// type never reads a wrong file; the cache can be turned off; small checkpoints are not cached.
// A damaged file (truncated, a FIFO, a block of NaN or zeros, NaN under a valid
// checksum) is reported through PackedCacheOptions::warn and the model packed afresh, with the
// same results as without a cache, from the library and from the `ordo` binary; a file that
// shrinks under a loaded model cannot kill it.
// ctest-label: integration
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

#include <gtest/gtest.h>

#include "io/file.h"
#include "io/model_config.h"
#include "io/verified_file.h"
#include "models/family.h"
#include "models/packed_cache.h"
#include "models/seq2seq_model.h"
#include "ordo/ordo.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/temp_dir.h"
#include "support/thread_count.h"

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

INSTANTIATE_TEST_SUITE_P(
    Fixtures, PackedCache,
    ::testing::Combine(::testing::Values("marian_opus_en_mg", "marian_sep_en_mg", "pegasus", "nllb", "fsmt", "bart",
                                         "mbart50", "t5", "t5_v1", "led", "longt5", "pegasus_x"),
                       ::testing::Values(nn::GemmType::kFloat32, nn::GemmType::kBFloat16, nn::GemmType::kInt8)),
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

// PackedCacheOptions::write_in_background (how ordo::Translator loads): the model comes back
// before its cache file is written; destroying it, or wait_for_cache_file(), waits for the
// file, which is then complete (nothing else in the folder but the hash index: no temporary
// file) and read by the next start without being rewritten.
TEST(PackedCacheFiles, AFileWrittenInTheBackgroundIsCompleteOnceTheModelIsGone) {
  testing::TempDir tmp;
  const std::string dir = fixture_dir("marian_opus_en_mg");
  io::ModelConfig config = io::load_model_config(dir + "/config.json");
  std::vector<std::string> warnings;           // read only after the writer has ended
  ::setenv("ORDO_WEIGHT_CACHE", "always", 1);  // the fixture is far below 64 MB
  {
    ModelOptions options;
    options.weight_cache_dir = tmp.file("api");
    options.on_warning = [&warnings](const std::string& w) { warnings.push_back(w); };
    const Translator translator(dir, options);
  }
  ::unsetenv("ORDO_WEIGHT_CACHE");
  const std::vector<std::string> files = cache_files(tmp.file("api"));
  ASSERT_EQ(files.size(), 1u)
      << "the Translator's destructor did not wait for its cache file (or left a temporary one)";
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  {
    models::Seq2SeqModel fresh(config, models::family_for(config));
    std::string why;
    EXPECT_TRUE(models::restore_packed(tmp.file("api") + "/" + files[0], fresh, nn::GemmType::kFloat32, &why)) << why;
  }

  models::PackedCacheOptions cache;
  cache.dir = tmp.file("library");
  cache.min_checkpoint_bytes = 0;
  cache.write_in_background = true;
  const auto packed = load(dir, nn::GemmType::kInt8, &cache);
  packed->wait_for_cache_file();
  const std::vector<std::string> written = cache_files(cache.dir);
  ASSERT_EQ(written.size(), 1u);
  const std::string file = cache.dir + "/" + written[0];
  const int64_t at = mtime_ns(file);
  const auto hit = load(dir, nn::GemmType::kInt8, &cache);  // the index knows the fixture's hash
  hit->wait_for_cache_file();
  EXPECT_TRUE(at::equal(logits(*hit), logits(*packed)));
  EXPECT_EQ(mtime_ns(file), at) << "a hit rewrote the file";
  EXPECT_EQ(cache_files(cache.dir).size(), 1u);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
}

// The checkpoint's hash is remembered in the cache folder by the file's stat() fingerprint
// (a start does not read the whole checkpoint again), and only while that fingerprint holds:
// a byte changed in place with the modification time put back still gives another name (its
// ctime moved), and a file written just now is not remembered at all. The file is aged by a
// clock of the test's own (PackedCacheClock), not by waiting.
class PackedCacheHashIndex : public ::testing::Test {
 protected:
  void SetUp() override {
    std::system(("cp -r '" + fixture_dir("marian_opus_en_mg") + "' '" + model_ + "'").c_str());
    ASSERT_TRUE(io::path_exists(checkpoint_));
  }
  // The cache file's name in `dir`, "now" being `later_ns` past the real time.
  std::string name(const std::string& dir, int64_t later_ns = 0) const {
    models::PackedCacheClock clock;
    clock.now_ns = [later_ns] { return models::system_clock_ns() + later_ns; };
    return models::packed_cache_path(dir, checkpoint_, config_, nn::GemmType::kInt8, clock);
  }
  // The name once the checkpoint has settled, by a clock past the 2 s: its hash is remembered.
  std::string aged_name() const { return name(cache_, kPastTheSettlingTime); }

  static constexpr int64_t kPastTheSettlingTime = int64_t{2100} * 1000000;
  testing::TempDir tmp_;
  const std::string model_ = tmp_.file("model"), cache_ = tmp_.file("cache"), index_ = cache_ + "/checkpoint-hashes";
  const std::string checkpoint_ = model_ + "/model.safetensors", config_ = model_ + "/config.json";
};

TEST_F(PackedCacheHashIndex, AFileWrittenJustNowIsNotRemembered) {
  ASSERT_FALSE(name(cache_).empty());
  EXPECT_FALSE(io::path_exists(index_)) << "a file written less than 2 s ago was remembered";
}

TEST_F(PackedCacheHashIndex, ASettledFileIsRememberedUnderItsPath) {
  const std::string fresh = name(cache_);
  EXPECT_EQ(aged_name(), fresh);
  const std::string remembered = read_bytes(index_);
  ASSERT_EQ(std::count(remembered.begin(), remembered.end(), '\n'), 1) << remembered;
  EXPECT_NE(remembered.find(model_), std::string::npos) << remembered;
  EXPECT_EQ(name(cache_), fresh);
}

TEST_F(PackedCacheHashIndex, TheRememberedHashIsWhatNamesTheFile) {
  const std::string fresh = aged_name();
  const std::string remembered = read_bytes(index_);
  ASSERT_EQ(std::count(remembered.begin(), remembered.end(), '\n'), 1) << remembered;
  write_bytes(index_, std::string(32, '0') + remembered.substr(32));
  EXPECT_NE(name(cache_), fresh) << "another hash under the same fingerprint gives another name";
  write_bytes(index_, remembered);
  EXPECT_EQ(name(cache_), fresh);
}

TEST_F(PackedCacheHashIndex, AByteChangedInPlaceWithItsTimeSetBackGivesAnotherName) {
  const std::string fresh = aged_name();
  ASSERT_TRUE(io::path_exists(index_));
  struct stat before;
  ASSERT_EQ(::stat(checkpoint_.c_str(), &before), 0);
  {
    std::fstream f(checkpoint_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-2, std::ios::end);
    char c;
    f.get(c);
    f.seekp(-2, std::ios::end);
    f.put(static_cast<char>(c ^ 0x01));
  }
  const struct timespec times[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(::utimensat(AT_FDCWD, checkpoint_.c_str(), times, 0), 0);
  const std::string changed = name(cache_);
  EXPECT_NE(changed, fresh);
  const std::string unindexed = tmp_.file("no-index");
  EXPECT_EQ(changed, name(unindexed).replace(0, unindexed.size(), cache_)) << "the changed bytes were not read";
}

// The damages a probe of hostile files did, done to a cache file in place.
enum class Damage { kTruncated, kFifo, kNanBlock, kZeroedBlock };

const char* damage_name(Damage damage) {
  switch (damage) {
    case Damage::kTruncated: return "truncated";
    case Damage::kFifo: return "fifo";
    case Damage::kNanBlock: return "nan_block";
    case Damage::kZeroedBlock: return "zeroed_block";
  }
  return "?";
}

// What the warning says for it.
const char* damage_words(Damage damage) {
  switch (damage) {
    case Damage::kTruncated: return "truncated";
    case Damage::kFifo: return "FIFO";
    case Damage::kNanBlock: return "checksum mismatch";
    case Damage::kZeroedBlock: return "checksum mismatch";
  }
  return "?";
}

void damage_file(const std::string& file, Damage damage) {
  std::string content = read_bytes(file);
  const size_t middle = content.size() / 2 / 4 * 4;
  switch (damage) {
    case Damage::kTruncated: content.resize(content.size() / 2); break;
    case Damage::kFifo:
      ASSERT_EQ(::unlink(file.c_str()), 0);
      ASSERT_EQ(::mkfifo(file.c_str(), 0644), 0);
      return;
    case Damage::kNanBlock:  // 1 KB of NaN in the middle: the file keeps its size
      for (size_t i = 0; i < 1024; i += 4) {
        const float nan = std::nanf("");
        std::memcpy(&content[middle + i], &nan, 4);
      }
      break;
    case Damage::kZeroedBlock: std::memset(&content[middle], 0, 8192); break;
  }
  write_bytes(file, content);
}

// Runs `load` on another thread and waits at most a minute: a load blocked on a FIFO at the
// cache path fails the test instead of hanging it (the FIFO is then opened to free it).
template <class Load>
auto bounded(Load load, const std::string& fifo) {
  auto result = std::async(std::launch::async, load);
  if (result.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    ADD_FAILURE() << "loading waited on " << fifo;
    const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (fd >= 0) ::close(fd);
  }
  return result.get();
}

class PackedCacheDamage : public ::testing::TestWithParam<Damage> {};

TEST_P(PackedCacheDamage, IsReportedAndPackedAfreshWithTheSameResults) {
  const Damage damage = GetParam();
  const std::string dir = fixture_dir("marian_opus_en_mg");
  for (const nn::GemmType type : {nn::GemmType::kFloat32, nn::GemmType::kInt8}) {
    testing::TempDir tmp;
    models::PackedCacheOptions cache;
    cache.dir = tmp.file("cache");
    cache.min_checkpoint_bytes = 0;
    std::vector<std::string> warnings;
    cache.warn = [&](const std::string& message) { warnings.push_back(message); };
    const at::Tensor expected = logits(*load(dir, type, nullptr));
    load(dir, type, &cache);  // a miss: packs and saves
    ASSERT_TRUE(warnings.empty()) << warnings[0];
    const std::string file = cache.dir + "/" + cache_files(cache.dir).at(0);
    damage_file(file, damage);

    const auto model = bounded([&] { return load(dir, type, &cache); }, file);
    EXPECT_TRUE(at::equal(logits(*model), expected));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find(file), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find(damage_words(damage)), std::string::npos) << warnings[0];
    EXPECT_NE(warnings[0].find("packing from the checkpoint"), std::string::npos) << warnings[0];

    // The file was written again: the next load is a hit, silent, with the same results.
    EXPECT_EQ(io::path_kind(file), io::PathKind::kRegular);
    warnings.clear();
    EXPECT_TRUE(at::equal(logits(*load(dir, type, &cache)), expected));
    EXPECT_TRUE(warnings.empty()) << warnings[0];
    io::ModelConfig config = io::load_model_config(dir + "/config.json");
    models::Seq2SeqModel fresh(config, models::family_for(config));
    EXPECT_TRUE(models::restore_packed(file, fresh, type));
  }
}

// The same through the `ordo` binary: the output of a damaged cache is the output without one,
// the run succeeds, and stderr says why the cache was not used.
TEST_P(PackedCacheDamage, TheCommandLineTranslatesAsWithoutACache) {
  const Damage damage = GetParam();
  testing::TempDir tmp;
  const std::string input = tmp.write("input.txt", "A man is walking.\nThe house is red.\nWhere are the children?\n");
  const std::string model = "-m '" + fixture_dir("marian_opus_en_mg") + "'";
  const std::string ordo = "timeout 120 " + std::string(ORDO_BINARY_DIR) + "/ordo translate " + model +
                           " --compute-type int8 -i '" + input + "'";
  const testing::CliRun uncached = testing::run_shell(ordo + " --no-weight-cache", tmp);
  ASSERT_EQ(uncached.exit_code, 0) << uncached.err;
  // ORDO_WEIGHT_CACHE=always: the fixture is far below the 64 MB a checkpoint needs otherwise.
  const std::string cached = "ORDO_WEIGHT_CACHE=always ORDO_CACHE_DIR='" + tmp.file("cache") + "' " + ordo;
  const testing::CliRun first = testing::run_shell(cached, tmp);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(first.out, uncached.out);
  const std::vector<std::string> files = cache_files(tmp.file("cache"));
  ASSERT_EQ(files.size(), 1u);
  damage_file(tmp.file("cache") + "/" + files[0], damage);
  EXPECT_EQ(first.err.find("warning"), std::string::npos) << first.err;
  const testing::CliRun damaged = testing::run_shell(cached, tmp);
  EXPECT_EQ(damaged.exit_code, 0) << damaged.err;
  EXPECT_EQ(damaged.out, uncached.out);
  // Told on stderr (ModelOptions::on_warning), naming the file and what is wrong with it.
  EXPECT_NE(damaged.err.find("ordo: warning: weight cache not used: " + tmp.file("cache") + "/" + files[0]),
            std::string::npos)
      << damaged.err;
  EXPECT_NE(damaged.err.find(damage_words(damage)), std::string::npos) << damaged.err;
  const testing::CliRun repaired = testing::run_shell(cached, tmp);
  EXPECT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_EQ(repaired.out, uncached.out);
  EXPECT_EQ(repaired.err.find("warning"), std::string::npos) << repaired.err;
}

INSTANTIATE_TEST_SUITE_P(Issue29, PackedCacheDamage,
                         ::testing::Values(Damage::kTruncated, Damage::kFifo, Damage::kNanBlock, Damage::kZeroedBlock),
                         [](const auto& info) { return std::string(damage_name(info.param)); });

// The checksum cannot vouch for what was written: NaN in a tensor, a bias or float32 packed
// weights of a file whose checksum is right (written so, or recomputed by someone) is refused
// as it is in a checkpoint, naming the part.
TEST(PackedCacheFiles, NanUnderAValidChecksumIsRefused) {
  const std::string dir = fixture_dir("marian_opus_en_mg");
  testing::TempDir tmp;
  models::PackedCacheOptions cache;
  cache.dir = tmp.file("cache");
  cache.min_checkpoint_bytes = 0;
  std::vector<std::string> warnings;
  cache.warn = [&](const std::string& message) { warnings.push_back(message); };
  const at::Tensor expected = logits(*load(dir, nn::GemmType::kFloat32, nullptr));
  load(dir, nn::GemmType::kFloat32, &cache);
  const std::string file = cache.dir + "/" + cache_files(cache.dir).at(0);
  const std::string good = read_bytes(file);
  uint64_t header_bytes = 0;
  std::memcpy(&header_bytes, good.data() + 8, 8);
  const nlohmann::json header = nlohmann::json::parse(good.substr(24, header_bytes));
  const size_t data_start = (24 + header_bytes + 4095) / 4096 * 4096;
  // [offset, bytes] of a part, its name in the warning.
  std::vector<std::pair<nlohmann::json, std::string>> targets;
  for (const nlohmann::json& t : header.at("tensors"))
    if (t.at("name") == "model.encoder.layers.0.final_layer_norm.weight")
      targets.push_back({t.at("data"), "model.encoder.layers.0.final_layer_norm.weight"});
  for (const nlohmann::json& l : header.at("linears"))
    if (l.at("name") == "model.decoder.layers.1.fc2") {
      targets.push_back({l.at("bias"), "model.decoder.layers.1.fc2"});
      targets.push_back({l.at("weights"), "model.decoder.layers.1.fc2"});
    }
  ASSERT_EQ(targets.size(), 3u);
  // The scans run on the loading threads (each a run of parts): the same refusals on 1 and 3.
  testing::ThreadCount restore;
  for (const int threads : {1, 3}) {
    at::set_num_threads(threads);
    for (const auto& [range, name] : targets) {
      for (const float value : {std::nanf(""), INFINITY}) {
        std::string bad = good;
        std::memcpy(&bad[data_start + range.at(0).get<size_t>() + 8], &value, 4);
        const uint64_t checksum = io::verified_checksum(bad.data(), bad.size() - 8);
        std::memcpy(&bad[bad.size() - 8], &checksum, 8);
        write_bytes(file, bad);
        warnings.clear();
        EXPECT_TRUE(at::equal(logits(*load(dir, nn::GemmType::kFloat32, &cache)), expected));
        ASSERT_EQ(warnings.size(), 1u) << name;
        EXPECT_NE(warnings[0].find(name), std::string::npos) << warnings[0];
        EXPECT_NE(warnings[0].find("NaN or an infinity"), std::string::npos) << warnings[0];
      }
    }
    // NaN in the first tensor and in the last packed weights: the first in the file is named,
    // whichever thread scans it.
    std::string bad = good;
    const nlohmann::json& first = header.at("tensors").at(0);
    const nlohmann::json& last = header.at("linears").back();
    ASSERT_TRUE(last.contains("weights"));
    for (const nlohmann::json* range : {&first.at("data"), &last.at("weights")}) {
      const float nan = std::nanf("");
      std::memcpy(&bad[data_start + range->at(0).get<size_t>()], &nan, 4);
    }
    const uint64_t checksum = io::verified_checksum(bad.data(), bad.size() - 8);
    std::memcpy(&bad[bad.size() - 8], &checksum, 8);
    write_bytes(file, bad);
    warnings.clear();
    EXPECT_TRUE(at::equal(logits(*load(dir, nn::GemmType::kFloat32, &cache)), expected));
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_NE(warnings[0].find("tensor '" + first.at("name").get<std::string>() + "' holds NaN"), std::string::npos)
        << threads << " threads: " << warnings[0];
  }
}

// A cache file truncated while a process used it (mapped) killed it with SIGBUS. The
// hit's weights live in the process's own memory: shrinking or removing the file changes
// nothing.
TEST(PackedCacheFiles, AFileShrinkingUnderALoadedModelCannotKillIt) {
  const std::string dir = fixture_dir("marian_opus_en_mg");
  for (const nn::GemmType type : {nn::GemmType::kFloat32, nn::GemmType::kInt8}) {
    testing::TempDir tmp;
    models::PackedCacheOptions cache;
    cache.dir = tmp.file("cache");
    cache.min_checkpoint_bytes = 0;
    const at::Tensor expected = logits(*load(dir, type, &cache));
    const std::string file = cache.dir + "/" + cache_files(cache.dir).at(0);
    const int64_t written = mtime_ns(file);
    const auto hit = load(dir, type, &cache);
    ASSERT_EQ(mtime_ns(file), written) << "not a hit";
    ASSERT_EQ(::truncate(file.c_str(), 4096), 0);
    EXPECT_TRUE(at::equal(logits(*hit), expected));
    ASSERT_EQ(::truncate(file.c_str(), 0), 0);
    ASSERT_EQ(::unlink(file.c_str()), 0);
    EXPECT_TRUE(at::equal(logits(*hit), expected));
  }
}

// A cache that cannot be written (its folder is a file) is told, and the model still loads.
TEST(PackedCacheFiles, AnUnwritableCacheIsReportedNotFatal) {
  const std::string dir = fixture_dir("marian_opus_en_mg");
  testing::TempDir tmp;
  models::PackedCacheOptions cache;
  cache.dir = tmp.write("not_a_folder", "x") + "/cache";
  cache.min_checkpoint_bytes = 0;
  std::vector<std::string> warnings;
  cache.warn = [&](const std::string& message) { warnings.push_back(message); };
  const at::Tensor expected = logits(*load(dir, nn::GemmType::kInt8, nullptr));
  EXPECT_TRUE(at::equal(logits(*load(dir, nn::GemmType::kInt8, &cache)), expected));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("weight cache not written"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("not_a_folder"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace ordo
