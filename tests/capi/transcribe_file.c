/* Transcribes a clip through the C ABI, greedy with one temperature and at most 32 new tokens
 * (as `ordo transcribe --beam-size 1 --max-length 32 --temperature 0` with the thresholds off):
 *   transcribe_file MODEL AUDIO FORMAT LANGUAGE           ordo_transcribe_file
 *   transcribe_file MODEL AUDIO.wav FORMAT LANGUAGE raw   ordo_transcribe_samples on the samples
 *                                                         of a 16 kHz mono 16-bit WAV read here
 * The transcript goes to stdout; exit 1 with the library's message on stderr when it fails. */
#include <ordo/ordo_c.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char* error) {
  fprintf(stderr, "transcribe_file: %s\n", error ? error : "unknown error");
  ordo_free_string(error);
  return 1;
}

static uint32_t le32(const unsigned char* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The samples of a PCM WAV's "data" chunk as floats (x / 32768), or NULL. */
static float* read_wav(const char* path, size_t* count) {
  FILE* in = fopen(path, "rb");
  if (!in) return NULL;
  static unsigned char bytes[1 << 22];
  const size_t size = fread(bytes, 1, sizeof bytes, in);
  fclose(in);
  if (size < 12 || memcmp(bytes, "RIFF", 4) != 0 || memcmp(bytes + 8, "WAVE", 4) != 0) return NULL;
  for (size_t at = 12; at + 8 <= size;) {
    const uint32_t length = le32(bytes + at + 4);
    if (memcmp(bytes + at, "data", 4) == 0) {
      const size_t n = (length <= size - at - 8 ? length : size - at - 8) / 2;
      float* samples = malloc(n * sizeof(float) + 1);
      if (!samples) return NULL;
      for (size_t i = 0; i < n; ++i) {
        const unsigned char* p = bytes + at + 8 + 2 * i;
        samples[i] = (float)(int16_t)(uint16_t)(p[0] | p[1] << 8) / 32768.0f;
      }
      *count = n;
      return samples;
    }
    at += 8 + length + (length & 1);
  }
  return NULL;
}

/* NULL handles and arguments are errors with a message, never crashes. */
static int null_arguments_fail(void) {
  char* error = NULL;
  char* output = NULL;
  const float samples[1] = {0.0f};
  int ok = ordo_speech_recognizer_new(NULL, NULL, &error) == NULL && error != NULL;
  ordo_free_string(error);
  ok = ok && ordo_transcribe_file(NULL, "a.wav", NULL, NULL, NULL, &output, &error) == -1 && output == NULL &&
       error != NULL && strstr(error, "speech recognizer is NULL") != NULL;
  ordo_free_string(error);
  ok = ok && ordo_transcribe_samples(NULL, samples, 1, NULL, NULL, "srt", &output, &error) == -1 && error != NULL;
  ordo_free_string(error);
  ordo_free_speech_recognizer(NULL);
  if (!ok) fprintf(stderr, "transcribe_file: a NULL argument did not fail with a message\n");
  return ok;
}

int main(int argc, char** argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: transcribe_file MODEL AUDIO FORMAT LANGUAGE [raw]\n");
    return 2;
  }
  if (!null_arguments_fail()) return 1;
  char* error = NULL;
  ordo_speech_recognizer* recognizer = ordo_speech_recognizer_new(argv[1], NULL, &error);
  if (!recognizer) return fail(error);
  ordo_options* options = ordo_options_new();
  if (ordo_options_set(options, "beam_size", "1", &error) != 0 ||
      ordo_options_set(options, "max_new_tokens", "32", &error) != 0)
    return fail(error);
  struct ordo_transcribe_params params = ordo_transcribe_default_params();
  params.language = argv[4];
  char* output = NULL;
  int status = 0;
  if (argc > 5) {
    size_t count = 0;
    float* samples = read_wav(argv[2], &count);
    if (!samples) {
      fprintf(stderr, "transcribe_file: %s: not a 16-bit PCM WAV\n", argv[2]);
      return 1;
    }
    status = ordo_transcribe_samples(recognizer, samples, count, &params, options, argv[3], &output, &error);
    free(samples);
  } else {
    status = ordo_transcribe_file(recognizer, argv[2], &params, options, argv[3], &output, &error);
  }
  if (status != 0) {
    status = fail(error);
  } else {
    fputs(output, stdout);
    ordo_free_string(output);
  }
  ordo_free_options(options);
  ordo_free_speech_recognizer(recognizer);
  return status;
}
