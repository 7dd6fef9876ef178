/* Translates standard input line by line through the C ABI with a glossary, as `ordo translate
 * --glossary TSV` does: one output line per input line (at most 64 lines).
 *   glossary_translate MODEL TSV|- [SOURCE=TARGET ...]
 * TSV: read with ordo_glossary_read_tsv; "-": an empty glossary (ordo_glossary_new). Each
 * SOURCE=TARGET is added with ordo_glossary_add. The glossary is freed as soon as it is set on
 * the options, before any translation: the options keep their own copy. */
#define _POSIX_C_SOURCE 200809L
#include <ordo/ordo_c.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxLines = 64 };

static int fail(char* error) {
  fprintf(stderr, "glossary_translate: %s\n", error ? error : "unknown error");
  ordo_free_string(error);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: glossary_translate MODEL TSV|- [SOURCE=TARGET ...] < input\n");
    return 2;
  }
  char* error = NULL;
  ordo_glossary* glossary = strcmp(argv[2], "-") == 0 ? ordo_glossary_new() : ordo_glossary_read_tsv(argv[2], &error);
  if (!glossary) return fail(error);
  for (int a = 3; a < argc; ++a) {
    char* equals = strchr(argv[a], '=');
    if (!equals) {
      fprintf(stderr, "glossary_translate: '%s' is not SOURCE=TARGET\n", argv[a]);
      return 2;
    }
    *equals = '\0';
    if (ordo_glossary_add(glossary, argv[a], equals + 1, &error) != 0) return fail(error);
  }
  ordo_options* options = ordo_options_new();
  if (!options) return fail(NULL);
  if (ordo_options_set_glossary(options, glossary, &error) != 0) return fail(error);
  ordo_free_glossary(glossary);

  char* lines[kMaxLines];
  size_t count = 0;
  char* line = NULL;
  size_t capacity = 0;
  ssize_t length;
  while ((length = getline(&line, &capacity, stdin)) >= 0) {
    if (count == kMaxLines) {
      fprintf(stderr, "glossary_translate: more than %d lines\n", kMaxLines);
      return 2;
    }
    if (length > 0 && line[length - 1] == '\n') line[--length] = '\0';
    lines[count] = strdup(line);
    if (!lines[count++]) return fail(NULL);
  }
  free(line);

  ordo_translator* translator = ordo_translator_new(argv[1], NULL, &error);
  if (!translator) return fail(error);
  ordo_result* result = ordo_translate(translator, (const char* const*)lines, count, options, NULL, &error);
  if (!result) return fail(error);
  for (size_t i = 0; i < ordo_result_count(result); ++i) {
    const char* text = ordo_result_text(result, i, 0);
    printf("%s\n", text ? text : "");
  }
  ordo_free_result(result);
  ordo_free_translator(translator);
  ordo_free_options(options);
  for (size_t i = 0; i < count; ++i) free(lines[i]);
  return 0;
}
