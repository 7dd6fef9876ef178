// The tokenizer of a model folder, chosen by its family: for the Translator and for tools that
// read text as a model does (ordo-vmap).
#pragma once

#include <memory>
#include <string>

#include "io/model_config.h"
#include "models/family.h"
#include "text/tokenizer.h"

namespace ordo::pipeline {

// Throws ordo::Error naming the missing or malformed file.
std::unique_ptr<text::Tokenizer> load_tokenizer(const std::string& dir, const models::FamilySpec& family,
                                                const io::ModelConfig& config);

}  // namespace ordo::pipeline
