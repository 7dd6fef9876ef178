/* Translates standard input line by line through ordo's C ABI (include/ordo/ordo_c.h), as
 * `ordo translate` does: one output line per input line; with n_best=N above 1 the N best of
 * each line as "index ||| text ||| score".
 *
 *   translate MODEL [name=value ...] < input.txt
 *   MODEL: a Hugging Face model folder or a bundled name ("en-de"); name=value: decoding options
 *   by their table names (beam_size=4, n_best=2, max_new_tokens=64, target_lang=de, ...).
 *
 * Build:  cc -std=c11 -Wall -Werror translate.c -I/opt/ordo/include -L/opt/ordo/lib -lordo
 * A bad model, option or input prints the library's message and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <ordo/ordo_c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kChunk = 64 }; /* lines translated per call */

static int fail(char* error) {
  fprintf(stderr, "translate: %s\n", error ? error : "unknown error");
  ordo_free_string(error);
  return 1;
}

/* Translates lines[0..count) and prints them; `first` is the index of lines[0] in the input. */
static int translate_chunk(const ordo_translator* translator, const ordo_options* options, char** lines,
                           size_t count, size_t first, int n_best_format) {
  char* error = NULL;
  ordo_result* result = ordo_translate(translator, (const char* const*)lines, count, options, NULL, &error);
  if (!result) return fail(error);
  for (size_t i = 0; i < ordo_result_count(result); ++i) {
    if (!n_best_format) {
      const char* text = ordo_result_text(result, i, 0);
      printf("%s\n", text ? text : "");
      continue;
    }
    for (size_t k = 0; k < ordo_result_hypothesis_count(result, i); ++k)
      printf("%zu ||| %s ||| %g\n", first + i, ordo_result_text(result, i, k), ordo_result_score(result, i, k));
  }
  ordo_free_result(result);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s MODEL [name=value ...] < input (ordo %s)\n", argv[0], ordo_version());
    return 2;
  }
  char* error = NULL;
  struct ordo_translator_params params = ordo_translator_default_params();
  ordo_translator* translator = ordo_translator_new(argv[1], &params, &error);
  if (!translator) return fail(error);
  ordo_options* options = ordo_options_new();
  int n_best_format = 0, status = 0;
  for (int a = 2; a < argc && status == 0; ++a) {
    char* equals = strchr(argv[a], '=');
    if (!equals) {
      fprintf(stderr, "translate: '%s' is not name=value\n", argv[a]);
      status = 2;
      break;
    }
    *equals = '\0';
    if (ordo_options_set(options, argv[a], equals + 1, &error) != 0) status = fail(error);
    else if (strcmp(argv[a], "n_best") == 0) n_best_format = atoi(equals + 1) > 1;
  }
  char* lines[kChunk];
  size_t count = 0, first = 0;
  char* line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while (status == 0 && (length = getline(&line, &capacity, stdin)) >= 0) {
    if (length > 0 && line[length - 1] == '\n') line[--length] = '\0';
    if (length > 0 && line[length - 1] == '\r') line[--length] = '\0';
    lines[count] = strdup(line);
    if (!lines[count]) {
      status = 1;
      break;
    }
    if (++count == kChunk) {
      status = translate_chunk(translator, options, lines, count, first, n_best_format);
      for (size_t i = 0; i < count; ++i) free(lines[i]);
      first += count;
      count = 0;
    }
  }
  if (status == 0 && count > 0) status = translate_chunk(translator, options, lines, count, first, n_best_format);
  for (size_t i = 0; i < count; ++i) free(lines[i]);
  free(line);
  ordo_free_options(options);
  ordo_free_translator(translator);
  return status;
}
