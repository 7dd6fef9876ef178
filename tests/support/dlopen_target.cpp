// A library for tests/pipeline/process_state_test.cpp to load and unload in a loop: a table of
// pointers that the loader relocates at every load (its data is the process's own copy, never
// the file's bytes), read back through a function.
extern "C" {

static const char* const kWords[] = {"zero", "one", "two", "three", "four", "five", "six", "seven"};

__attribute__((visibility("default"))) const char* ordo_dlopen_target_word(int i) { return kWords[i & 7]; }

}  // extern "C"
