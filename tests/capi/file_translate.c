/* Translates a file through the C ABI, as `ordo translate -i IN -o OUT` does:
 *   file_translate MODEL IN OUT          ordo_translate_file (the format from IN's extension)
 *   file_translate MODEL IN OUT FORMAT   ordo_translate_file_data on IN's bytes, OUT written here
 * Exit 1 with the library's message on stderr when it fails. */
#include <ordo/ordo_c.h>

#include <stdio.h>
#include <stdlib.h>

static int fail(char* error) {
  fprintf(stderr, "file_translate: %s\n", error ? error : "unknown error");
  ordo_free_string(error);
  return 1;
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: file_translate MODEL IN OUT [FORMAT]\n");
    return 2;
  }
  char* error = NULL;
  ordo_translator* translator = ordo_translator_new(argv[1], NULL, &error);
  if (!translator) return fail(error);
  int status = 0;
  if (argc == 4) {
    if (ordo_translate_file(translator, argv[2], argv[3], NULL, NULL, NULL, &error) != 0) status = fail(error);
  } else {
    FILE* in = fopen(argv[2], "rb");
    if (!in) return fail(NULL);
    static char data[1 << 20];
    const size_t size = fread(data, 1, sizeof data, in);
    fclose(in);
    char* output = NULL;
    size_t output_size = 0;
    if (ordo_translate_file_data(translator, data, size, argv[4], NULL, NULL, &output, &output_size, &error) != 0) {
      status = fail(error);
    } else {
      FILE* out = fopen(argv[3], "wb");
      if (!out || fwrite(output, 1, output_size, out) != output_size) status = 1;
      if (out) fclose(out);
      ordo_free_string(output);
    }
  }
  ordo_free_translator(translator);
  return status;
}
