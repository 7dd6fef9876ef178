#include "train/spm_train.h"

#include "text/sentencepiece.h"

namespace ordo::train {

void run_spm_train(const std::vector<std::string>& args) { text::train_sentencepiece(args); }

}  // namespace ordo::train
