// Loading a model folder: every way it can be wrong ends in an ordo::Error that names the
// file and the field or tensor; the legacy pytorch_model.bin loads like model.safetensors.
// ctest-label: integration
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <torch/csrc/jit/serialization/pickle.h>

#include "io/safetensors.h"
#include "models/seq2seq_model.h"
#include "ordo/translator.h"
#include "support/cli_run.h"
#include "support/fixtures.h"
#include "support/scratch_model.h"

namespace ordo {
namespace {

namespace fs = std::filesystem;
using testing::fixture_dir;

const char* kFixture = "marian_opus_en_mg";

// A scratch copy of a fixture folder that a test may break.
class ModelFolder : public ::testing::Test {
 protected:
  std::string path(const std::string& file) const { return scratch_.path(file); }
  void write(const std::string& file, const std::string& content) const { scratch_.write(file, content); }
  template <class Edit>
  void rewrite_weights(Edit edit) const {
    scratch_.rewrite_weights(edit);
  }
  std::string load_error() const { return scratch_.load_error(); }

  testing::ScratchModel scratch_{kFixture, ::testing::UnitTest::GetInstance()->current_test_info()->name()};
  fs::path dir_{scratch_.dir()};
};

TEST_F(ModelFolder, LoadsAsIs) { EXPECT_EQ(load_error(), ""); }

TEST_F(ModelFolder, MissingConfig) {
  fs::remove(path("config.json"));
  EXPECT_NE(load_error().find("config.json"), std::string::npos) << load_error();
}

TEST_F(ModelFolder, UnsupportedArchitectureListsSupportedTypes) {
  std::ifstream in(path("config.json"));
  std::string config((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "\"model_type\": \"marian\"";
  config.replace(config.find(from), from.size(), "\"model_type\": \"gpt2\"");
  const std::string arch = "\"MarianMTModel\"";
  config.replace(config.find(arch), arch.size(), "\"GPT2LMHeadModel\"");
  write("config.json", config);
  const std::string error = load_error();
  EXPECT_NE(error.find("gpt2"), std::string::npos) << error;
  EXPECT_NE(error.find("t5"), std::string::npos) << error;  // in the supported list
  EXPECT_NE(error.find("marian"), std::string::npos) << error;
  EXPECT_NE(error.find("config.json"), std::string::npos) << error;
}

TEST_F(ModelFolder, MissingWeightsFile) {
  fs::remove(path("model.safetensors"));
  const std::string error = load_error();
  EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find("pytorch_model.bin"), std::string::npos) << error;
}

TEST_F(ModelFolder, MissingTensorIsNamed) {
  rewrite_weights([](std::vector<io::TensorData>& tensors) {
    tensors.erase(std::remove_if(tensors.begin(), tensors.end(),
                                 [](const io::TensorData& t) { return t.name == "model.decoder.layers.1.fc2.bias"; }),
                  tensors.end());
  });
  const std::string error = load_error();
  EXPECT_NE(error.find("model.decoder.layers.1.fc2.bias"), std::string::npos) << error;
  EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
}

TEST_F(ModelFolder, WrongTensorShapeIsNamed) {
  rewrite_weights([](std::vector<io::TensorData>& tensors) {
    for (io::TensorData& t : tensors)
      if (t.name == "model.encoder.layers.0.fc1.weight") {
        t.shape = {t.shape[1], t.shape[0]};  // transposed: same bytes, wrong shape
      }
  });
  const std::string error = load_error();
  EXPECT_NE(error.find("model.encoder.layers.0.fc1.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("[16, 32]"), std::string::npos) << error;
}

TEST_F(ModelFolder, HalfPrecisionWeightsLoadAndTranslateTheSame) {
  const Translator reference(dir_.string());
  rewrite_weights([](std::vector<io::TensorData>& tensors) {
    for (io::TensorData& t : tensors) {
      const io::TensorView view{t.name, t.dtype, t.shape, t.bytes.data(), t.bytes.size()};
      t.bytes = io::float32_to_f16_bytes(io::to_float32(view));
      t.dtype = io::DType::F16;
    }
  });
  const Translator half(dir_.string());
  DecodeOptions options;
  options.beam_size = 1;
  options.max_new_tokens = 5;
  // F16 rounding changes logits slightly; the test only demands a working load and run.
  EXPECT_EQ(half.translate_ids({{833, 38792, 0}}, options)[0].hypotheses[0].ids.size(),
            reference.translate_ids({{833, 38792, 0}}, options)[0].hypotheses[0].ids.size());
}

TEST_F(ModelFolder, LegacyPytorchBinLoadsLikeSafetensors) {
  const Translator reference(dir_.string());
  {
    // The zip format torch.save() writes, produced by LibTorch's compatible pickler.
    const auto checkpoint = models::open_safetensors(path("model.safetensors"));
    c10::impl::GenericDict state(c10::StringType::get(), c10::TensorType::get());
    const io::SafetensorsFile file(path("model.safetensors"));
    for (const std::string& name : file.names()) state.insert(name, checkpoint->get(name));
    const std::vector<char> bytes = torch::jit::pickle_save(state);
    std::ofstream(path("pytorch_model.bin"), std::ios::binary)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  fs::remove(path("model.safetensors"));
  const Translator legacy(dir_.string());
  DecodeOptions options;
  options.beam_size = 4;
  options.max_new_tokens = 10;
  const std::vector<std::vector<int64_t>> source = {{833, 38792, 14992, 595, 0}};
  EXPECT_EQ(legacy.translate_ids(source, options)[0].hypotheses[0].ids,
            reference.translate_ids(source, options)[0].hypotheses[0].ids);
}

TEST_F(ModelFolder, UnreadablePytorchBinIsAClearError) {
  fs::remove(path("model.safetensors"));
  write("pytorch_model.bin", "this is not a torch.save archive");
  const std::string error = load_error();
  EXPECT_NE(error.find("pytorch_model.bin"), std::string::npos) << error;
}

// A model.safetensors that is a symlink loop said "no model weights found".
TEST_F(ModelFolder, SymlinkLoopAsWeightsSaysSo) {
  fs::remove(path("model.safetensors"));
  fs::create_symlink("model.safetensors", path("model.safetensors"));
  const std::string error = load_error();
  EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
  EXPECT_NE(error.find(std::strerror(ELOOP)), std::string::npos) << error;
  EXPECT_EQ(error.find("no model weights found"), std::string::npos) << error;
}

// A file cut short under a live mapping is SIGBUS. The weights are read with
// read(), so a model.safetensors truncated while a model loads from it is an ordo::Error.
TEST_F(ModelFolder, AWeightsFileCutShortWhileLoadingIsAnError) {
  const auto checkpoint = models::open_checkpoint(dir_.string());
  const at::Tensor before = checkpoint->get("model.encoder.layers.0.fc1.weight");
  ASSERT_EQ(::truncate(path("model.safetensors").c_str(), 4096), 0);
  std::string error;
  try {
    checkpoint->get("model.decoder.layers.1.fc2.weight");
    checkpoint->get_rows("model.shared.weight", 10, 5);
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find(path("model.safetensors") + ": truncated while being read"), std::string::npos) << error;
  EXPECT_GT(before.abs().sum().item<double>(), 0.0);
}

// "tensor '...' has dtype I16" named no file.
TEST_F(ModelFolder, IntegerWeightsNameTheFileAndTheTensor) {
  rewrite_weights([](std::vector<io::TensorData>& tensors) {
    for (io::TensorData& t : tensors)
      if (t.name == "model.encoder.layers.0.fc1.bias") {
        t.dtype = io::DType::I16;
        t.bytes.resize(t.bytes.size() / 2);
      }
  });
  const std::string error = load_error();
  EXPECT_NE(error.find(path("model.safetensors")), std::string::npos) << error;
  EXPECT_NE(error.find("model.encoder.layers.0.fc1.bias"), std::string::npos) << error;
  EXPECT_NE(error.find("I16"), std::string::npos) << error;
}

// An unreadable folder's message gave no reason. The system's words now say it: a
// symlink loop in place of the folder, and a folder without permission (as another user when
// the test runs as root, who may read anything).
TEST_F(ModelFolder, AnUnreadableFolderSaysWhy) {
  const std::string loop = path("loop");
  fs::create_symlink("loop", loop);
  std::string error;
  try {
    Translator translator(loop);
  } catch (const Error& e) {
    error = e.what();
  }
  EXPECT_NE(error.find(loop + "/config.json"), std::string::npos) << error;
  EXPECT_NE(error.find(std::strerror(ELOOP)), std::string::npos) << error;

  const std::string locked = dir_.string();
  ASSERT_EQ(::chmod(locked.c_str(), 0), 0);
  if (::geteuid() != 0) {
    error = load_error();
  } else if (std::system("command -v setpriv > /dev/null") == 0) {
    const testing::TempDir out;
    const testing::CliRun run =
        testing::run_shell("echo 'A man.' | setpriv --reuid=65534 --regid=65534 --clear-groups " +
                               std::string(ORDO_BINARY_DIR) + "/ordo translate -m '" + locked + "'",
                           out);
    EXPECT_NE(run.exit_code, 0);
    error = run.err;
  }
  ::chmod(locked.c_str(), 0755);
  if (error.empty()) GTEST_SKIP() << "root without setpriv: no other user to try the locked folder as";
  EXPECT_NE(error.find(locked + "/config.json"), std::string::npos) << error;
  EXPECT_NE(error.find(std::strerror(EACCES)), std::string::npos) << error;
}

// T5 folders: errors name T5's own tensor names and config.json fields.
class T5Folder : public ::testing::Test {
 protected:
  testing::ScratchModel scratch_{"t5", ::testing::UnitTest::GetInstance()->current_test_info()->name()};
};

TEST_F(T5Folder, AnUnknownActivationNamesConfigJsonAndTheField) {
  nlohmann::json config = scratch_.read_json("config.json");
  config["feed_forward_proj"] = "gated-swoosh";
  config.erase("dense_act_fn");
  config.erase("is_gated_act");
  scratch_.write("config.json", config.dump(1));
  const std::string error = scratch_.load_error();
  EXPECT_NE(error.find(scratch_.path("config.json")), std::string::npos) << error;
  EXPECT_NE(error.find("'feed_forward_proj'"), std::string::npos) << error;
  EXPECT_NE(error.find("swoosh"), std::string::npos) << error;
}

TEST_F(T5Folder, MissingTensorsAreNamedAsT5NamesThem) {
  for (const char* name : {"decoder.block.1.layer.2.DenseReluDense.wi_1.weight",
                           "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight",
                           "decoder.final_layer_norm.weight", "lm_head.weight"}) {
    testing::ScratchModel scratch("t5", std::string("missing_") + std::to_string(std::hash<std::string>()(name)));
    scratch.rewrite_weights([&](std::vector<io::TensorData>& tensors) {
      tensors.erase(
          std::remove_if(tensors.begin(), tensors.end(), [&](const io::TensorData& t) { return t.name == name; }),
          tensors.end());
    });
    const std::string error = scratch.load_error();
    EXPECT_NE(error.find(name), std::string::npos) << error;
    EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;
  }
}

TEST_F(T5Folder, ATableOfTheWrongSizeNamesTheBucketField) {
  nlohmann::json config = scratch_.read_json("config.json");
  config["relative_attention_num_buckets"] = 16;
  scratch_.write("config.json", config.dump(1));
  const std::string error = scratch_.load_error();
  EXPECT_NE(error.find("'relative_attention_num_buckets'"), std::string::npos) << error;
  EXPECT_NE(error.find("relative_attention_bias.weight"), std::string::npos) << error;
}

TEST_F(T5Folder, ExtraBlocksAreNamedWithNumLayers) {
  nlohmann::json config = scratch_.read_json("config.json");
  config["num_layers"] = 1;
  scratch_.write("config.json", config.dump(1));
  const std::string error = scratch_.load_error();
  EXPECT_NE(error.find("encoder.block.1.*"), std::string::npos) << error;
  EXPECT_NE(error.find("num_layers=1"), std::string::npos) << error;
}

// BART folders: the learned position tables are pinned to max_position_embeddings + 2 rows.
TEST(BartFolder, APositionTableOfTheWrongSizeNamesMaxPositionEmbeddings) {
  testing::ScratchModel scratch("bart", "bart_positions");
  nlohmann::json config = scratch.read_json("config.json");
  config["max_position_embeddings"] = 512;  // the tables have 1024 + 2 rows
  scratch.write("config.json", config.dump(1));
  std::string error = scratch.load_error();
  EXPECT_NE(error.find(scratch.path("config.json")), std::string::npos) << error;
  EXPECT_NE(error.find("'max_position_embeddings'"), std::string::npos) << error;
  EXPECT_NE(error.find("embed_positions.weight"), std::string::npos) << error;
  EXPECT_NE(error.find("[514, 16]"), std::string::npos) << error;
  // And a table the checkpoint lacks is named.
  testing::ScratchModel missing("bart", "bart_no_positions");
  missing.rewrite_weights([](std::vector<io::TensorData>& tensors) {
    tensors.erase(
        std::remove_if(tensors.begin(), tensors.end(),
                       [](const io::TensorData& t) { return t.name == "model.decoder.embed_positions.weight"; }),
        tensors.end());
  });
  error = missing.load_error();
  EXPECT_NE(error.find("model.decoder.embed_positions.weight"), std::string::npos) << error;
}

}  // namespace
}  // namespace ordo
