// ordo-train's continued training and checkpoint averaging (tools/train/averaging.h): the
// mean really is the mean of the kept states, old states are deleted, a bad checkpoint leaves
// the model alone, and --init carries a bundled folder's weights, shape and vocabulary over
// unchanged (a run of zero epochs writes back the very tensors it started from), or, with
// --init-layers, grown into a deeper model whose layer i is the trained layer i * L / N.
// ctest-label: slow
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "io/safetensors.h"
#include "models/family.h"
#include "ordo/error.h"
#include "support/cli_run.h"
#include "support/temp_dir.h"
#include "train/averaging.h"
#include "train/layer_stacking.h"
#include "train/marian_export.h"
#include "train/training_forward.h"

namespace ordo {
namespace {

train::MarianShape tiny_shape() {
  train::MarianShape shape;
  shape.d_model = 16;
  shape.layers = 1;
  shape.heads = 2;
  shape.ffn_dim = 24;
  shape.max_positions = 32;
  return shape;
}

models::Seq2SeqModel tiny_model(uint64_t seed) {
  models::Seq2SeqModel model(train::marian_config(tiny_shape(), 21), models::marian_family());
  at::manual_seed(seed);
  at::NoGradGuard no_grad;
  model.visit([](const std::string&, at::Tensor& p) { p.uniform_(-1, 1); });
  return model;
}

std::map<std::string, at::Tensor> parameters(models::Seq2SeqModel& model) {
  std::map<std::string, at::Tensor> out;
  model.visit([&](const std::string& name, at::Tensor& p) { out[name] = p.detach().clone(); });
  return out;
}

// Four tiny models saved as checkpoints of steps 250 to 1000, keeping 3, and their parameters.
struct SavedCheckpoints {
  testing::TempDir tmp;
  std::string dir = tmp.file("checkpoints");
  std::vector<std::map<std::string, at::Tensor>> states;
  std::vector<std::string> kept;

  void save() {
    ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
    for (int64_t step : {250, 500, 750, 1000}) {  // 1000 sorts after 750: by step, not by name
      models::Seq2SeqModel model = tiny_model(static_cast<uint64_t>(step));
      states.push_back(parameters(model));
      kept = train::save_checkpoint(dir, step, model, 3);
    }
  }
};

TEST(CheckpointAveraging, SavingKeepsTheNewestCheckpointsByStep) {
  SavedCheckpoints saved;
  ASSERT_NO_FATAL_FAILURE(saved.save());
  ASSERT_EQ(saved.kept.size(), 3u);
  EXPECT_EQ(saved.kept.front(), saved.dir + "/step-500.safetensors");
  EXPECT_EQ(saved.kept.back(), saved.dir + "/step-1000.safetensors");
  EXPECT_EQ(train::list_checkpoints(saved.dir), saved.kept);
}

TEST(CheckpointAveraging, AveragingGivesTheMeanOfTheKeptCheckpoints) {
  SavedCheckpoints saved;
  ASSERT_NO_FATAL_FAILURE(saved.save());
  ASSERT_EQ(saved.kept.size(), 3u);
  models::Seq2SeqModel model = tiny_model(1);
  train::average_checkpoints(saved.kept, model);
  const auto& states = saved.states;
  int checked = 0;
  model.visit([&](const std::string& name, at::Tensor& p) {
    const at::Tensor expected =
        (states[1].at(name).to(at::kDouble) + states[2].at(name).to(at::kDouble) + states[3].at(name).to(at::kDouble)) /
        3.0;
    EXPECT_TRUE(at::allclose(p.to(at::kDouble), expected, 0, 1e-7)) << name;
    EXPECT_FALSE(at::equal(p, states[3].at(name))) << name;  // not just the last state
    ++checked;
  });
  EXPECT_GT(checked, 10);
}

TEST(CheckpointAveraging, ACheckpointOfAnotherShapeLeavesTheModelAlone) {
  testing::TempDir tmp;
  const std::string dir = tmp.file("checkpoints");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  models::Seq2SeqModel a = tiny_model(1);
  train::save_checkpoint(dir, 1, a, 5);
  train::MarianShape wider = tiny_shape();
  wider.ffn_dim = 32;
  models::Seq2SeqModel b(train::marian_config(wider, 21), models::marian_family());
  train::initialise(b, 2);
  const std::vector<std::string> files = train::save_checkpoint(dir, 2, b, 5);

  models::Seq2SeqModel model = tiny_model(3);
  const auto before = parameters(model);
  try {
    train::average_checkpoints(files, model);
    FAIL() << "averaged checkpoints of different shapes";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step-2.safetensors"), std::string::npos) << e.what();
  }
  model.visit([&](const std::string& name, at::Tensor& p) { EXPECT_TRUE(at::equal(p, before.at(name))) << name; });
  EXPECT_THROW(train::average_checkpoints({}, model), Error);
}

std::string train_command(const std::string& work, const std::string& extra) {
  const std::string samples = std::string(ORDO_TEST_DATA_DIR) + "/samples/multi30k_val100";
  return "OPENBLAS_CORETYPE=SkylakeX " + std::string(ORDO_BINARY_DIR) + "/ordo-train --train-source " + samples +
         ".en --train-target " + samples + ".de --valid-source " + samples + ".en --valid-target " + samples +
         ".de --valid-lines 8 --batch-tokens 400 --threads 1 --work '" + work + "' " + extra;
}

TEST(OrdoTrainInit, StartsFromTheBundledFolderUnchanged) {
  testing::TempDir tmp;
  const std::string bundled = std::string(ORDO_SOURCE_DIR) + "/models/en-de";
  // Zero epochs: load, validate, write best/ — the weights it started from, as float16 again.
  const testing::CliRun run =
      testing::run_shell(train_command(tmp.file("work"), "--init " + bundled + " --max-epochs 0"), tmp);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("initialised from"), std::string::npos) << run.err;
  const io::SafetensorsFile original(bundled + "/model.safetensors"),
      written(tmp.file("work") + "/best/model.safetensors");
  EXPECT_EQ(written.names(), original.names());
  for (const std::string& name : original.names()) {
    const io::TensorView& a = original.get(name);
    const io::TensorView& b = written.get(name, a.shape);
    EXPECT_EQ(io::to_float32(a), io::to_float32(b)) << name;
  }
  EXPECT_EQ(testing::read_file(tmp.file("work") + "/best/source.spm"), testing::read_file(bundled + "/source.spm"));
  EXPECT_EQ(testing::read_file(tmp.file("work") + "/best/vocab.json"), testing::read_file(bundled + "/vocab.json"));
}

// One epoch from the bundled en-de folder, validating every 2 steps and averaging the last 2
// checkpoints, run once for the tests that read it.
struct TrainedFromBundled {
  testing::TempDir tmp;
  std::string work = tmp.file("work");
  testing::CliRun run = testing::run_shell(
      train_command(work, "--init " + std::string(ORDO_SOURCE_DIR) +
                              "/models/en-de --max-epochs 1 --valid-every 2 --average 2 --lr 1e-5 --warmup 1"),
      tmp);
};

const TrainedFromBundled& trained_from_bundled() {
  static const TrainedFromBundled made;
  return made;
}

// Continued, not restarted: a trained model's loss (random weights start near ln 8001 = 9).
TEST(OrdoTrainInit, TrainingContinuesFromTheBundledWeights) {
  const testing::CliRun& run = trained_from_bundled().run;
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const size_t at = run.err.find("valid step 2 | loss ");
  ASSERT_NE(at, std::string::npos) << run.err;
  EXPECT_LT(std::stod(run.err.substr(at + 20)), 3.0) << run.err;
}

TEST(OrdoTrainInit, TrainingFromTheBundledFolderAveragesItsLastCheckpoints) {
  const TrainedFromBundled& trained = trained_from_bundled();
  ASSERT_EQ(trained.run.exit_code, 0) << trained.run.err;
  EXPECT_NE(trained.run.err.find("averaged 2 checkpoints"), std::string::npos) << trained.run.err;
  EXPECT_EQ(train::list_checkpoints(trained.work + "/checkpoints").size(), 2u);
  const io::SafetensorsFile averaged(trained.work + "/averaged/model.safetensors");
  EXPECT_TRUE(averaged.contains("model.shared.weight"));
  EXPECT_FALSE(testing::read_file(trained.work + "/averaged/vocab.json").empty());
}

TEST(LayerStacking, EachTrainedLayerServesItsNeighbours) {
  EXPECT_EQ(train::stacked_name("model.encoder.layers.0.fc1.weight", 3, 6), "model.encoder.layers.0.fc1.weight");
  EXPECT_EQ(train::stacked_name("model.encoder.layers.1.fc1.weight", 3, 6), "model.encoder.layers.0.fc1.weight");
  EXPECT_EQ(train::stacked_name("model.decoder.layers.4.encoder_attn.k_proj.bias", 3, 6),
            "model.decoder.layers.2.encoder_attn.k_proj.bias");
  EXPECT_EQ(train::stacked_name("model.decoder.layers.5.final_layer_norm.weight", 3, 6),
            "model.decoder.layers.2.final_layer_norm.weight");
  EXPECT_EQ(train::stacked_name("model.encoder.layers.11.fc2.weight", 3, 12), "model.encoder.layers.2.fc2.weight");
  EXPECT_EQ(train::stacked_name("model.encoder.layers.2.fc2.weight", 2, 3), "model.encoder.layers.1.fc2.weight");
  EXPECT_EQ(train::stacked_name("model.shared.weight", 3, 6), "model.shared.weight");
  EXPECT_EQ(train::stacked_name("final_logits_bias", 3, 6), "final_logits_bias");
  EXPECT_EQ(train::stacked_name("model.encoder.layers.6.fc1.weight", 3, 6), "model.encoder.layers.6.fc1.weight");
}

TEST(OrdoTrainInit, GrowsTheBundledFolderIntoADeeperModel) {
  testing::TempDir tmp;
  // de-en: a bundled model of 3 + 3 layers (en-de is the 6 + 6 grown from one).
  const std::string bundled = std::string(ORDO_SOURCE_DIR) + "/models/de-en";
  const testing::CliRun run =
      testing::run_shell(train_command(tmp.file("work"), "--init " + bundled + " --init-layers 6 --max-epochs 0"), tmp);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("its 3 layers grown into 6"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("6+6 layers"), std::string::npos) << run.err;
  // It translates (the validation above ran it) and its config says 6 layers.
  EXPECT_NE(run.err.find("valid step 0 | loss "), std::string::npos) << run.err;
  const std::string config = testing::read_file(tmp.file("work") + "/best/config.json");
  EXPECT_NE(config.find("\"encoder_layers\": 6"), std::string::npos) << config;
  EXPECT_NE(config.find("\"decoder_layers\": 6"), std::string::npos) << config;
  const io::SafetensorsFile original(bundled + "/model.safetensors"),
      written(tmp.file("work") + "/best/model.safetensors");
  for (const auto& [grown, trained] : std::vector<std::pair<std::string, std::string>>{
           {"model.encoder.layers.0.fc1.weight", "model.encoder.layers.0.fc1.weight"},
           {"model.encoder.layers.1.fc1.weight", "model.encoder.layers.0.fc1.weight"},
           {"model.encoder.layers.3.self_attn.q_proj.weight", "model.encoder.layers.1.self_attn.q_proj.weight"},
           {"model.decoder.layers.5.encoder_attn.out_proj.bias", "model.decoder.layers.2.encoder_attn.out_proj.bias"},
           {"model.decoder.layers.4.final_layer_norm.weight", "model.decoder.layers.2.final_layer_norm.weight"},
           {"model.shared.weight", "model.shared.weight"}}) {
    const io::TensorView& a = original.get(trained);
    EXPECT_EQ(io::to_float32(written.get(grown, a.shape)), io::to_float32(a)) << grown;
  }
}

TEST(OrdoTrainInit, RefusesToShrinkOrToGrowNothing) {
  testing::TempDir tmp;
  const std::string bundled = std::string(ORDO_SOURCE_DIR) + "/models/de-en";  // 3 + 3 layers
  const testing::CliRun shrink =
      testing::run_shell(train_command(tmp.file("work"), "--init " + bundled + " --init-layers 2 --max-epochs 0"), tmp);
  EXPECT_EQ(shrink.exit_code, 1);
  EXPECT_NE(shrink.err.find("cannot grow 3 layers into 2"), std::string::npos) << shrink.err;
  const testing::CliRun alone =
      testing::run_shell(train_command(tmp.file("work2"), "--init-layers 6 --max-epochs 0"), tmp);
  EXPECT_NE(alone.exit_code, 0);
  EXPECT_NE(alone.err.find("--init-layers requires --init"), std::string::npos) << alone.err;
}

TEST(OrdoTrainInit, RefusesAFolderItCannotContinue) {
  testing::TempDir tmp;
  const std::string pegasus = std::string(ORDO_TEST_DATA_DIR) + "/hf/pegasus";
  const testing::CliRun run = testing::run_shell(train_command(tmp.file("work"), "--init " + pegasus), tmp);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_NE(run.err.find(pegasus + "/config.json: --init needs a Marian model"), std::string::npos) << run.err;
}

}  // namespace
}  // namespace ordo
