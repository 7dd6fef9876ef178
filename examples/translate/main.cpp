// Minimal embedding of ordo: translate the command-line arguments with a model folder.
//   translate_example MODEL_DIR "Hello world." "How are you?"
#include <iostream>

#include <ordo/ordo.h>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: translate_example MODEL_DIR SENTENCE...\n";
    return 2;
  }
  ordo::configure_process();  // the program's own choice: ordo's allocator and oneDNN settings
  try {
    const ordo::Translator translator(argv[1]);  // load once; translate() is thread-safe
    ordo::DecodeOptions options;
    options.beam_size = 4;
    const auto results = translator.translate({argv + 2, argv + argc}, options);
    for (const ordo::TranslationResult& result : results) {
      const ordo::Hypothesis& best = result.hypotheses.at(0);
      std::cout << best.text << "\t" << best.score << "\n";
    }
  } catch (const ordo::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
