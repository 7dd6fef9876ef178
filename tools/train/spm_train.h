// Trains the joint SentencePiece model in process, through libordo_sentencepiece.so (the
// shim, in its own link-map namespace: see src/text/sentencepiece_shim.h). It used to run
// Debian's `spm_train` as a child process, because under the former RTLD_DEEPBIND loading
// libsentencepiece_train bound std::cerr to libstdc++'s never-constructed copy and crashed on
// its first log line; in a namespace of its own it has its own, constructed, libstdc++.
#pragma once

#include <string>
#include <vector>

namespace ordo::train {

// Trains with spm_train's options (e.g. {"--input=corpus.txt", "--model_prefix=spm", ...}).
// Throws ordo::Error with SentencePiece's message when training fails; SentencePiece's log
// goes to this process's stderr.
void run_spm_train(const std::vector<std::string>& args);

}  // namespace ordo::train
