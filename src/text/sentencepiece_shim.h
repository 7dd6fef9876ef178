// The C interface of libordo_sentencepiece.so, the only library that links SentencePiece.
//
// Why a separate library: Debian's libsentencepiece.so.0 embeds protobuf-lite 3.14 and exports
// its symbols (1602 of them), while LibTorch needs libprotobuf.so.32 (3.21). In one symbol
// scope the two collide: SentencePiece's protobuf calls bind to 3.21 and it refuses its model
// files ("compiled against version 3.14.0"), or crashes.
//
// Why dlmopen: libordo loads this shim with dlmopen(LM_ID_NEWLM), into a link-map namespace of
// its own with its own libstdc++, libc and SentencePiece; nothing outside it can bind to the
// protobuf inside, nor the reverse. Alternatives, tried (docs/building.md, "SentencePiece and protobuf"):
//  - dlopen(RTLD_LOCAL | RTLD_DEEPBIND), used before: AddressSanitizer and ThreadSanitizer refuse
//    DEEPBIND ("incompatible with sanitizer runtime"), and the trainer crashed under it (its
//    std::cerr bound to libstdc++'s unconstructed copy instead of the executable's).
//  - a build-time copy of libsentencepiece.so.0 with DF_SYMBOLIC: fine for the processor, but
//    libsentencepiece_train.so.0's own protobuf references still bind to LibTorch's 3.21 (its
//    trainer fails a protobuf CHECK), and installing a patched copy of a system library keeps
//    it from Debian's updates.
//  - linking SentencePiece statically: Debian ships no libsentencepiece.a.
// dlmopen works in release, AddressSanitizer+UBSan and ThreadSanitizer builds, with LibTorch
// loaded, trainer included. Its conditions: the shim itself is never built with sanitizers (a
// new namespace cannot see the sanitizer runtime of the executable; CMakeLists.txt adds
// -fno-sanitize=all), memory crosses the line only as copies and is freed on the side that
// allocated it (ordo_spm_free_string), and no C++ exception crosses it: every entry point
// catches everything and reports it as an error string.
#pragma once

#include <stddef.h>

extern "C" {

// Every function reports failure by returning NULL / a negative value and setting *error to a
// malloc'ed message (free it with ordo_spm_free_string); none throws.
// Loads a model file; refuses anything that is not a regular file (directory, FIFO, device).
typedef void* (*ordo_spm_load_fn)(const char* path, char** error);
typedef void (*ordo_spm_free_fn)(void* processor);
// Pieces of `text`, each as its length (a size_t) followed by its bytes (a piece may hold a
// NUL byte: SentencePiece keeps unknown characters, NUL included, as pieces), concatenated in
// one malloc'ed buffer of *size bytes.
typedef char* (*ordo_spm_encode_fn)(void* processor, const char* text, size_t length, size_t* size, char** error);
// `pieces`: `count` '\0'-terminated pieces concatenated; returns the malloc'ed detokenized text.
typedef char* (*ordo_spm_decode_fn)(void* processor, const char* pieces, size_t count, char** error);
typedef void (*ordo_spm_free_string_fn)(char* text);
// Vocabulary access: id of a piece (the unknown id when absent), piece of an id in
// [0, piece_size) (malloc'ed), number of pieces.
typedef int (*ordo_spm_piece_to_id_fn)(void* processor, const char* piece, char** error);
typedef char* (*ordo_spm_id_to_piece_fn)(void* processor, int id, char** error);
typedef int (*ordo_spm_piece_size_fn)(void* processor, char** error);
// Trains a model as spm_train does: `count` options given as keys ("input", "model_prefix",
// "vocab_size", ...) and values. Returns 0 on success.
typedef int (*ordo_spm_train_fn)(const char* const* keys, const char* const* values, size_t count, char** error);

}  // extern "C"
