// ordo — the sinusoidal position encodings, as plain numbers ("Attention Is All You Need",
// section 3.5). They are what a model adds to its token embeddings to know word order; the
// families differ only in how sines and cosines are laid out and where position 0 starts.
// BART and mBART learn their table instead: the same lookup, trained values read from the
// checkpoint. T5 has no table at all: each self-attention adds a learned number per head that
// depends only on how far the key is from the query (RelativePositionBiasTable). `ordo
// positions` prints and draws these tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ordo/export.h"

namespace ordo {

enum class PositionLayout {
  kInterleaved,  // textbook: dim 2i = sin(p / base^(2i/d)), dim 2i+1 = cos(...)
  kSinCos,       // Hugging Face Marian / Pegasus: all sines, then all cosines
  kFairseq,      // M2M100 / NLLB: sines then cosines, frequencies base^(-i/(d/2-1))
  kLearned,      // BART / mBART: a trained table (embed_positions.weight), only from a model
  kPegasusX,     // Pegasus-X: sines then cosines, frequencies base^(-i/(d/2-1)), from position 0,
                 // float32 arithmetic, computed for the positions asked for (no table)
};

// "interleaved", "sin-cos", "fairseq", "learned", "pegasus-x" <-> PositionLayout; parse throws ordo::Error
// listing them.
ORDO_API PositionLayout parse_position_layout(const std::string& name);
ORDO_API const char* position_layout_name(PositionLayout layout);

struct PositionTable {
  PositionLayout layout = PositionLayout::kInterleaved;
  double base = 10000.0;
  int64_t length = 0;  // positions 0 .. length-1
  int64_t dim = 0;
  // Row of position 0 in the model's table (fairseq: padding_idx + 1; others 0). The values
  // below start at that row: values[p * dim + j] is dimension j of position p. They are the
  // float64 numbers a model's table is rounded from (fairseq's are float32 arithmetic);
  // a learned table's are its float32 weights.
  int64_t offset = 0;
  // A learned table: the stack it belongs to ("encoder" or "decoder": each learns its own);
  // "" for the computed ones, which both stacks share.
  std::string stack;
  std::vector<double> values;
  double at(int64_t position, int64_t dimension) const {
    return values[static_cast<size_t>(position * dim + dimension)];
  }
};

// The table for `length` positions of `dim` dimensions, computed as the models compute it
// (float64, rounded once; fairseq in float32 as torch does). Throws ordo::Error for sizes out
// of range (length 0 .. 2^20, dim 1 .. 2^16).
ORDO_API PositionTable position_encodings(int64_t length, int64_t dim, PositionLayout layout, double base = 10000.0);

// The table a model folder really uses: its family's layout and offset, its d_model, and
// max_position_embeddings positions unless `length` is given. Reads config.json, and for a
// learned table (BART, mBART) the encoder's or, with `decoder`, the decoder's rows from the
// checkpoint. Throws ordo::Error for a length past max_position_embeddings of a learned table.
ORDO_API PositionTable model_position_encodings(const std::string& model_dir, std::optional<int64_t> length = {},
                                                bool decoder = false);

// T5's relative position bias: what a stack's self-attention adds to the logit of a query and a
// key, per head, as a function of their distance (key position - query position). Distances
// share logarithmically wider buckets (num_buckets of them, all beyond max_distance in the
// last); the encoder's are bidirectional, the decoder's causal (keys after the query are masked,
// so only distances <= 0 matter there).
struct RelativePositionBiasTable {
  std::string family = "T5";  // "T5" or "LongT5"
  std::string stack;          // "encoder" or "decoder"
  bool bidirectional = true;
  // LongT5's encoder attends only to keys at most local_radius away (local and transient-global
  // attention); -1: no limit (T5, and LongT5's decoder).
  int64_t local_radius = -1;
  int64_t heads = 0, num_buckets = 0, max_distance = 0;
  int64_t first = 0, last = 0;   // the distances shown: first .. last
  std::vector<int64_t> buckets;  // buckets[k]: the bucket of distance first + k
  std::vector<double> values;    // values[h * distances() + k]: head h at distance first + k
  int64_t distances() const { return last - first + 1; }
  double at(int64_t head, int64_t distance) const {
    return values[static_cast<size_t>(head * distances() + (distance - first))];
  }
};

// Whether the folder's model uses relative position bias (T5) instead of a position table.
ORDO_API bool model_has_relative_positions(const std::string& model_dir);

// The encoder's (or, with `decoder`, the decoder's) relative position bias of a T5 folder,
// read from its checkpoint, for distances -reach .. reach (the decoder: -reach .. 0);
// reach defaults to relative_attention_max_distance (LongT5's encoder: its local_radius, at
// least 1). Throws ordo::Error for a model without
// one, or reach outside 1 .. 2^20.
ORDO_API RelativePositionBiasTable model_relative_position_bias(const std::string& model_dir,
                                                                std::optional<int64_t> reach = {},
                                                                bool decoder = false);

}  // namespace ordo
