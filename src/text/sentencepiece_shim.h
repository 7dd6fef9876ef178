// The C interface of libordo_sentencepiece.so, the only library that links SentencePiece.
//
// Why a separate library: Debian's libsentencepiece.so embeds protobuf-lite 3.14 and exports
// its symbols, while LibTorch loads libprotobuf 3.21. Linked into one process the two
// collide at start-up. libordo loads this shim with dlopen(RTLD_LOCAL | RTLD_DEEPBIND), so
// SentencePiece resolves protobuf inside its own symbol scope. Only C types cross the line.
#pragma once

#include <stddef.h>

extern "C" {

// Every function reports failure by returning NULL / non-zero and setting *error to a
// malloc'ed message (free it with ordo_spm_free_string).
typedef void* (*ordo_spm_load_fn)(const char* path, char** error);
typedef void (*ordo_spm_free_fn)(void* processor);
// Pieces of `text`, each terminated by '\0', concatenated in one malloc'ed buffer of *size bytes.
typedef char* (*ordo_spm_encode_fn)(void* processor, const char* text, size_t length, size_t* size, char** error);
// `pieces`: `count` '\0'-terminated pieces concatenated; returns the malloc'ed detokenized text.
typedef char* (*ordo_spm_decode_fn)(void* processor, const char* pieces, size_t count, char** error);
typedef void (*ordo_spm_free_string_fn)(char* text);
// Vocabulary access: id of a piece (the unknown id when absent), piece of an id (malloc'ed),
// number of pieces.
typedef int (*ordo_spm_piece_to_id_fn)(void* processor, const char* piece);
typedef char* (*ordo_spm_id_to_piece_fn)(void* processor, int id);
typedef int (*ordo_spm_piece_size_fn)(void* processor);

}  // extern "C"
