// libFuzzer harness: config.json and generation_config.json parsing (src/io/model_config.*)
// through the public load functions, on arbitrary file bytes. Refusal must be an ordo::Error.
#include "fuzz_util.h"
#include "io/model_config.h"
#include "ordo/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string config = ordo::fuzz::write_file("config.json", data, size);
  try {
    (void)ordo::io::load_model_config(config);
  } catch (const ordo::Error&) {
  }
  try {
    (void)ordo::io::generation_config_from_model_config(config);
  } catch (const ordo::Error&) {
  }
  const std::string generation = ordo::fuzz::write_file("generation_config.json", data, size);
  try {
    (void)ordo::io::load_generation_config(generation);
  } catch (const ordo::Error&) {
  }
  return 0;
}
