// Trains the joint SentencePiece model with Debian's `spm_train` (package `sentencepiece`),
// run as a child process. Not in-process: libsentencepiece_train, loaded in the shim's
// RTLD_DEEPBIND scope, binds std::cerr to libstdc++'s own (never constructed) copy instead
// of the executable's and crashes on its first log line.
#pragma once

#include <string>
#include <vector>

namespace ordo::train {

// Runs `spm_train ARGS...` (e.g. {"--input=corpus.txt", "--model_prefix=spm", ...}) and
// waits for it. Throws ordo::Error when spm_train is missing or fails; its output goes to
// this process's stderr.
void run_spm_train(const std::vector<std::string>& args);

}  // namespace ordo::train
