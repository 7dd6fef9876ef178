// Growing depth: start a deeper model from a trained shallower one instead of from random
// weights (--init-layers). A model of N layers per stack reads, for its layer i, the trained
// model's layer i * L / N (each of the L layers twice, side by side, for N = 2L), and
// everything else (embeddings, the decoder's output bias) as it is. Training from scratch
// at the larger size does not fit a 2-core budget; from a trained model the copy begins near
// what it knows (ALBERT shares one layer across a whole stack; here neighbours start equal and
// then drift apart), so continued training needs a fraction of the steps. Side by side is the
// nearer start: the bundled 3 + 3 en-de grown to 6 + 6 this way had a validation loss
// of 2.86 before any training (as it was: 1.52), stacked the other way (layers 0 1 2 0 1 2, as
// in progressive stacking, Gong et al., 2019) 5.85, near a random model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "models/checkpoint.h"

namespace ordo::train {

// Throws ordo::Error naming `where` (the trained model's file) unless a model of
// `trained_layers` >= 1 layers per stack can grow into one of `layers` >= trained_layers.
void check_growth(const std::string& where, int64_t trained_layers, int64_t layers);

// A view of `trained` (a model with `trained_layers` layers in each of its encoder and decoder
// stacks) as a model with `layers` layers; check_growth's error when it cannot grow so.
std::unique_ptr<models::Checkpoint> stacked_checkpoint(std::unique_ptr<models::Checkpoint> trained,
                                                       int64_t trained_layers, int64_t layers);

// The trained model's name for `name` of the deeper model: "…layers.<i>.…" becomes
// "…layers.<i * trained_layers / layers>.…"; other names are unchanged.
std::string stacked_name(const std::string& name, int64_t trained_layers, int64_t layers);

}  // namespace ordo::train
