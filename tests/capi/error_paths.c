/* ctest-label: unit
 * The C ABI's error paths (include/ordo/ordo_c.h): NULL handles, bad option names and values,
 * bad models, inputs and glossaries each give NULL / -1 and a message naming what is wrong,
 * never a crash.
 *   error_paths MODEL_DIR WORK_DIR   (a tiny fixture: the one translation it runs takes < 1 s;
 *                                     glossary files are written to WORK_DIR) */
#include <ordo/ordo_c.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0, checks = 0;

/* Streaming: counts events and keeps the final text. */
struct stream_log {
  int events;
  int done;
  double log_prob_sum;
  char text[4096];
};
static bool on_token(const struct ordo_token_event* event, void* user_data) {
  struct stream_log* log = user_data;
  ++log->events;
  log->log_prob_sum += event->log_prob;
  if (event->done) {
    ++log->done;
    snprintf(log->text, sizeof log->text, "%s", event->text);
  }
  return true;
}
static bool cancel_now(void* user_data) { return user_data == NULL; }

#define CHECK(condition)                                                      \
  do {                                                                        \
    ++checks;                                                                 \
    if (!(condition)) {                                                       \
      ++failures;                                                             \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #condition); \
    }                                                                         \
  } while (0)

/* The call failed with an error containing `part`; frees the error. */
static void expect_error(char* error, const char* part, int line) {
  ++checks;
  if (!error || !strstr(error, part)) {
    ++failures;
    fprintf(stderr, "%s:%d: error '%s' does not contain '%s'\n", __FILE__, line, error ? error : "(none)", part);
  }
  ordo_free_string(error);
}
#define EXPECT_ERROR(error, part) expect_error(error, part, __LINE__)

/* Writes `content` to WORK_DIR/name and returns the path (static storage, one at a time). */
static const char* write_file(const char* work_dir, const char* name, const char* content) {
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", work_dir, name);
  FILE* file = fopen(path, "wb");
  if (!file || fputs(content, file) < 0 || fclose(file) != 0) {
    fprintf(stderr, "cannot write %s\n", path);
    exit(2);
  }
  return path;
}

/* The call failed with exactly the error `expected`; frees the error. */
static void expect_exact_error(char* error, const char* expected, int line) {
  ++checks;
  if (!error || strcmp(error, expected) != 0) {
    ++failures;
    fprintf(stderr, "%s:%d: error '%s' is not '%s'\n", __FILE__, line, error ? error : "(none)", expected);
  }
  ordo_free_string(error);
}
#define EXPECT_EXACT_ERROR(error, expected) expect_exact_error(error, expected, __LINE__)

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: error_paths MODEL_DIR WORK_DIR\n");
    return 2;
  }
  char* error = NULL;

  /* Version and the option table. */
  CHECK(ordo_version() && strlen(ordo_version()) >= 5);
  CHECK(ordo_option_count() > 10);
  CHECK(ordo_option_name(0) && strcmp(ordo_option_name(0), "beam_size") == 0);
  CHECK(ordo_option_help(0) != NULL);
  CHECK(ordo_option_name(ordo_option_count()) == NULL);

  /* Loading. */
  CHECK(ordo_translator_new("/no/such/model", NULL, &error) == NULL);
  EXPECT_ERROR(error, "/no/such/model/config.json");
  CHECK(ordo_translator_new("no-such-bundled-model", NULL, &error) == NULL);
  EXPECT_ERROR(error, "'no-such-bundled-model' is not a folder, and a bundled model of that name was not found");
  CHECK(ordo_translator_new(NULL, NULL, &error) == NULL);
  EXPECT_ERROR(error, "no model given");
  CHECK(ordo_translator_new("/no/such/model", NULL, NULL) == NULL); /* no error wanted: no crash */
  struct ordo_translator_params params = ordo_translator_default_params();
  CHECK(params.threads == 0 && params.inter_threads == 1 && params.weight_cache);
  params.compute_type = "float16";
  CHECK(ordo_translator_new(argv[1], &params, &error) == NULL);
  EXPECT_ERROR(error, "compute_type must be one of float32, bfloat16, int8");
  params = ordo_translator_default_params();
  params.inter_threads = 0;
  CHECK(ordo_translator_new(argv[1], &params, &error) == NULL);
  EXPECT_ERROR(error, "inter_threads");
  params.inter_threads = 100000; /* more workers than the library starts: an error, not an abort */
  CHECK(ordo_translator_new(argv[1], &params, &error) == NULL);
  EXPECT_ERROR(error, "inter_threads must be an integer from 1 to 256");

  /* Options: names and values through the table, each error naming the option. */
  ordo_options* options = ordo_options_new();
  CHECK(options != NULL);
  CHECK(ordo_options_set(options, "beam_size", "4", &error) == 0 && error == NULL);
  CHECK(ordo_options_set(options, "beam_sise", "4", &error) == -1);
  EXPECT_ERROR(error, "no decoding option named 'beam_sise' (known: beam_size, n_best");
  CHECK(ordo_options_set(options, "beam_size", "four", &error) == -1);
  EXPECT_ERROR(error, "decoding option 'beam_size': 'four' must be an integer from 1 to 1024");
  CHECK(ordo_options_set(options, "beam_size", "0", &error) == -1);
  EXPECT_ERROR(error, "'beam_size': '0' must be an integer from 1 to 1024");
  CHECK(ordo_options_set(options, "beam_size", "4x", &error) == -1);
  EXPECT_ERROR(error, "'beam_size'");
  CHECK(ordo_options_set(options, "top_p", "1.5", &error) == -1);
  EXPECT_ERROR(error, "'top_p': '1.5' must be a number from");
  CHECK(ordo_options_set(options, "sample", "yes", &error) == -1);
  EXPECT_ERROR(error, "'sample': 'yes' must be true or false");
  CHECK(ordo_options_set(options, "seed", "-1", &error) == -1);
  EXPECT_ERROR(error, "'seed'");
  CHECK(ordo_options_set(options, "length_penalty", "0.6", &error) == 0);
  CHECK(ordo_options_set(options, "target_lang", "de", &error) == 0);
  CHECK(ordo_options_unset(options, "target_lang", &error) == 0);
  CHECK(ordo_options_unset(options, "nope", &error) == -1);
  EXPECT_ERROR(error, "'nope'");
  CHECK(ordo_options_set(options, "beam_size", NULL, &error) == -1);
  EXPECT_ERROR(error, "'beam_size': the value is NULL");
  CHECK(ordo_options_set(options, NULL, "4", &error) == -1);
  EXPECT_ERROR(error, "option name is NULL");
  CHECK(ordo_options_set(NULL, "beam_size", "4", &error) == -1);
  EXPECT_ERROR(error, "options is NULL");
  CHECK(ordo_options_set_preset(options, "no-such-preset", &error) == -1);
  EXPECT_ERROR(error, "preset 'no-such-preset.json' was not found");
  CHECK(ordo_options_set_preset(options, "translation", &error) == 0);
  CHECK(ordo_options_set_token_callback(NULL, NULL, NULL, &error) == -1);
  EXPECT_ERROR(error, "options is NULL");

  /* Glossaries: a bad file names itself and its line (the C++ message, word for word); a bad
   * term leaves the glossary as it was. */
  const char* path = write_file(argv[2], "bad.tsv", "bicycle\tVelo\n\nno tab here\n");
  char expected[4200];
  snprintf(expected, sizeof expected, "%s:3: expected 'source term<TAB>target term', found no tab", path);
  CHECK(ordo_glossary_read_tsv(path, &error) == NULL);
  EXPECT_EXACT_ERROR(error, expected);
  path = write_file(argv[2], "two_tabs.tsv", "bicycle\tVelo\tRad\n");
  snprintf(expected, sizeof expected, "%s:1: expected 'source term<TAB>target term', found more than one tab", path);
  CHECK(ordo_glossary_read_tsv(path, &error) == NULL);
  EXPECT_EXACT_ERROR(error, expected);
  path = write_file(argv[2], "empty_target.tsv", "man\tMann\nbicycle\t \n");
  snprintf(expected, sizeof expected, "%s:2: the target term of 'bicycle' is empty", path);
  CHECK(ordo_glossary_read_tsv(path, &error) == NULL);
  EXPECT_EXACT_ERROR(error, expected);
  CHECK(ordo_glossary_read_tsv("/no/such/terms.tsv", &error) == NULL);
  EXPECT_ERROR(error, "/no/such/terms.tsv");
  CHECK(ordo_glossary_read_tsv(NULL, &error) == NULL);
  EXPECT_EXACT_ERROR(error, "glossary path is NULL");
  path = write_file(argv[2], "good.tsv", "\357\273\277bicycle\tVelo\r\n\n  street \t Strasse\n");
  ordo_glossary* glossary = ordo_glossary_read_tsv(path, &error);
  CHECK(glossary != NULL && error == NULL && ordo_glossary_size(glossary) == 2);
  ordo_free_glossary(glossary);

  glossary = ordo_glossary_new();
  CHECK(glossary != NULL && ordo_glossary_size(glossary) == 0);
  CHECK(ordo_glossary_add(glossary, "bicycle", "Velo", &error) == 0 && error == NULL);
  CHECK(ordo_glossary_add(glossary, " ", "Velo", &error) == -1);
  EXPECT_EXACT_ERROR(error, "glossary: the source term is empty");
  CHECK(ordo_glossary_add(glossary, "street", "", &error) == -1);
  EXPECT_EXACT_ERROR(error, "glossary: the target term of 'street' is empty");
  CHECK(ordo_glossary_add(glossary, "caf\xe9", "Caf\xc3\xa9", &error) == -1);
  EXPECT_ERROR(error, "UTF-8");
  CHECK(ordo_glossary_add(glossary, NULL, "Velo", &error) == -1);
  EXPECT_EXACT_ERROR(error, "source term is NULL");
  CHECK(ordo_glossary_add(glossary, "bicycle", NULL, &error) == -1);
  EXPECT_EXACT_ERROR(error, "target term is NULL");
  CHECK(ordo_glossary_add(NULL, "bicycle", "Velo", &error) == -1);
  EXPECT_EXACT_ERROR(error, "glossary is NULL");
  CHECK(ordo_glossary_add(glossary, "bicycle", "", NULL) == -1); /* no error wanted: no crash */
  CHECK(ordo_glossary_size(glossary) == 1);
  CHECK(ordo_glossary_size(NULL) == 0);
  CHECK(ordo_options_set_glossary(NULL, glossary, &error) == -1);
  EXPECT_EXACT_ERROR(error, "options is NULL");
  CHECK(ordo_options_set_glossary(options, glossary, &error) == 0 && error == NULL);
  CHECK(ordo_options_set_glossary(options, NULL, &error) == 0 && error == NULL); /* cleared */
  ordo_free_glossary(glossary);
  ordo_free_glossary(NULL);

  /* NULL handles everywhere. */
  const char* one[] = {"Hello."};
  CHECK(ordo_translate(NULL, one, 1, options, NULL, &error) == NULL);
  EXPECT_ERROR(error, "translator is NULL");
  CHECK(ordo_result_count(NULL) == 0);
  CHECK(ordo_result_text(NULL, 0, 0) == NULL);
  CHECK(ordo_result_id(NULL, 0, 0, 0) == -1);
  CHECK(ordo_translator_model_dir(NULL) == NULL);
  CHECK(ordo_translator_language_count(NULL) == 0);
  ordo_free_translator(NULL);
  ordo_free_result(NULL);
  ordo_free_options(NULL);
  ordo_free_string(NULL);

  /* A real model: bad inputs and options fail per call, the translator stays usable. */
  ordo_translator* translator = ordo_translator_new(argv[1], NULL, &error);
  CHECK(translator != NULL && error == NULL);
  if (!translator) {
    fprintf(stderr, "cannot load %s: %s\n", argv[1], error);
    return 1;
  }
  CHECK(strcmp(ordo_translator_model_dir(translator), argv[1]) == 0);
  const char* bad_utf8[] = {"Hello \xff world."};
  CHECK(ordo_translate(translator, bad_utf8, 1, NULL, NULL, &error) == NULL);
  EXPECT_ERROR(error, "UTF-8");
  const char* with_null[] = {"Hello.", NULL};
  CHECK(ordo_translate(translator, with_null, 2, NULL, NULL, &error) == NULL);
  EXPECT_ERROR(error, "sentence 1 is NULL");
  ordo_options* greedy_force = ordo_options_new();
  ordo_options_set(greedy_force, "beam_size", "1", NULL);
  ordo_options_set(greedy_force, "force_words", "x", NULL);
  CHECK(ordo_translate(translator, one, 1, greedy_force, NULL, &error) == NULL);
  EXPECT_ERROR(error, "force_words");
  ordo_free_options(greedy_force);
  struct ordo_batch_params batch = ordo_batch_default_params();
  batch.batch_size = 0;
  CHECK(ordo_translate(translator, one, 1, NULL, &batch, &error) == NULL);
  EXPECT_ERROR(error, "batch_size");

  ordo_options* short_beam = ordo_options_new();
  ordo_options_set(short_beam, "beam_size", "2", NULL);
  ordo_options_set(short_beam, "n_best", "2", NULL);
  ordo_options_set(short_beam, "max_new_tokens", "5", NULL);
  ordo_result* result = ordo_translate(translator, one, 1, short_beam, NULL, &error);
  CHECK(result != NULL && error == NULL);
  CHECK(ordo_result_count(result) == 1);
  CHECK(ordo_result_hypothesis_count(result, 0) == 2);
  CHECK(ordo_result_hypothesis_count(result, 1) == 0);
  CHECK(ordo_result_text(result, 0, 2) == NULL);
  CHECK(ordo_result_id_count(result, 0, 0) >= 1 && ordo_result_id_count(result, 0, 0) <= 5);
  CHECK(ordo_result_id(result, 0, 0, ordo_result_id_count(result, 0, 0)) == -1);
  CHECK(ordo_result_token(result, 0, 0, ordo_result_token_count(result, 0, 0)) == NULL);
  CHECK(ordo_result_score(result, 0, 0) >= ordo_result_score(result, 0, 1));
  ordo_free_result(result);
  ordo_free_options(short_beam);

  /* Streaming and cancelling through C callbacks. */
  ordo_options* greedy = ordo_options_new();
  ordo_options_set(greedy, "beam_size", "1", NULL);
  ordo_options_set(greedy, "max_new_tokens", "6", NULL);
  struct stream_log log = {0, 0, 0.0, ""};
  CHECK(ordo_options_set_token_callback(greedy, on_token, &log, &error) == 0);
  result = ordo_translate(translator, one, 1, greedy, NULL, &error);
  CHECK(result != NULL);
  CHECK(log.done == 1 && log.events == (int)ordo_result_id_count(result, 0, 0) + 1);
  CHECK(result && strcmp(log.text, ordo_result_text(result, 0, 0)) == 0);
  CHECK(log.log_prob_sum < 0 && fabs(log.log_prob_sum - ordo_result_score(result, 0, 0)) < 1e-3);
  ordo_free_result(result);
  CHECK(ordo_options_set_cancel_callback(greedy, cancel_now, NULL, &error) == 0);
  CHECK(ordo_translate(translator, one, 1, greedy, NULL, &error) == NULL);
  EXPECT_ERROR(error, "cancelled");
  ordo_free_options(greedy);
  ordo_free_options(options);
  ordo_free_translator(translator);

  printf("%d checks, %d failed\n", checks, failures);
  return failures == 0 ? 0 : 1;
}
