// libFuzzer harness: the tokenizers' text input (src/text/*): the Marian tokenizer of
// tests/data/hf/marian_opus_en_mg, the SentencePiece families (Pegasus, M2M100, NLLB, T5,
// mBART-50 and mbart-large-cc25's layout on the mbart50 files) and BART's byte-level BPE of
// tests/data/hf, on arbitrary bytes: encode, tokenize, encode with a language, and decode of
// the encoded ids and of arbitrary ids (in and out of the vocabulary: T5's ids past its
// sentinels, BART's bytes that end inside a character).
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "ordo/error.h"
#include "text/tokenizer.h"

#ifndef ORDO_TEST_DATA_DIR
#error "ORDO_TEST_DATA_DIR must name tests/data"
#endif

namespace {

struct Tokenizers {
  std::vector<std::unique_ptr<ordo::text::Tokenizer>> all;
  Tokenizers() {
    const std::string hf = std::string(ORDO_TEST_DATA_DIR) + "/hf/";
    all.push_back(ordo::text::load_marian_tokenizer(hf + "marian_opus_en_mg", false));
    all.push_back(ordo::text::load_pegasus_tokenizer(hf + "pegasus"));
    all.push_back(ordo::text::load_m2m100_tokenizer(hf + "m2m100"));
    all.push_back(ordo::text::load_nllb_tokenizer(hf + "nllb"));
    all.push_back(ordo::text::load_bart_tokenizer(hf + "bart"));
    all.push_back(ordo::text::load_t5_tokenizer(hf + "t5"));
    all.push_back(ordo::text::load_mbart50_tokenizer(hf + "mbart50"));
    all.push_back(ordo::text::load_mbart_tokenizer(hf + "mbart50"));
  }
};

const Tokenizers& tokenizers() {
  static const Tokenizers instance;
  return instance;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Arbitrary ids from the same bytes: 16-bit values, some beyond every vocabulary, a few negative.
  std::vector<int64_t> raw_ids;
  for (size_t i = 0; i + 1 < size; i += 2) {
    const int64_t v = data[i] | (data[i + 1] << 8);
    raw_ids.push_back(v >= 0xff00 ? -(v - 0xff00) - 1 : v);
  }
  for (const auto& tokenizer : tokenizers().all) {
    try {
      const std::vector<int64_t> ids = tokenizer->encode(text);
      (void)tokenizer->tokenize(text);
      (void)tokenizer->decode(ids);
      (void)tokenizer->id_to_pieces(ids);
    } catch (const ordo::Error&) {
    }
    try {
      (void)tokenizer->decode(raw_ids);
      (void)tokenizer->id_to_pieces(raw_ids);
    } catch (const ordo::Error&) {
    }
    for (const std::string& lang : tokenizer->languages()) {
      try {
        (void)tokenizer->encode(text, lang);
      } catch (const ordo::Error&) {
      }
      break;  // one known language is enough; the rest differ only in the id
    }
    try {
      (void)tokenizer->encode(text, text.substr(0, 16));  // an arbitrary (mostly unknown) language
      (void)tokenizer->language_id(text);
    } catch (const ordo::Error&) {
    }
  }
  return 0;
}
