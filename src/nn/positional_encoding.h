// Sinusoidal position encodings ("Attention Is All You Need", section 3.5). The families
// differ in how they lay the sines and cosines out and where position 0 starts, so the
// layout and the offset are parameters rather than family code. BART and mBART learn their
// table instead: the same lookup by position, from a checkpoint weight (LearnedPositions).
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

#include "ordo/positions.h"

namespace ordo::nn {

// The layout is the public ordo::PositionLayout (ordo/positions.h):
//   kInterleaved  textbook: dim 2i = sin(pos / 10000^(2i/d)), dim 2i+1 = cos(pos / 10000^(2i/d))
//   kSinCos       Hugging Face Marian / Pegasus: the same frequencies, all sines in the first
//                 half of the vector and all cosines in the second half
//   kFairseq      M2M100, NLLB: sines then cosines, frequencies 10000^(-i/(d/2 - 1)), and the
//                 row of the padding index all zeros
//   kLearned      BART / mBART: no formula, a trained table of max_positions + offset rows (the
//                 checkpoint's embed_positions.weight); position p reads row p + offset
//                 (Hugging Face's offset is 2)
//   kPegasusX     Pegasus-X: sines then cosines with fairseq's frequencies, from position 0, in
//                 float32 torch arithmetic; no table: each call computes the positions it asks
//                 for, as Hugging Face's PegasusXSinusoidalPositionalEmbedding does (a 16,384 x
//                 1,024 table would be 64 MB per stack)
struct PositionEncodingSpec {
  PositionLayout layout = PositionLayout::kSinCos;
  // Index of the first real position in the table: 0 for Marian/Pegasus, padding_idx + 1
  // for fairseq-style models.
  int64_t offset = 0;
  // Row that stays zero (fairseq's padding index); -1 for none.
  int64_t zero_row = -1;
  // The wavelength base n: frequencies are n^(-2i/d). 10000 in every model; other values only
  // reproduce published tables.
  double base = 10000.0;
};

// A [num_positions, dim] float32 table for the given layout (not kLearned: Error). Computed in float64 and rounded
// once, the way the reference implementations build it with numpy (fairseq: float32 math,
// as torch does it there).
at::Tensor sinusoidal_table(int64_t num_positions, int64_t dim, const PositionEncodingSpec& spec);
// The same values before the rounding to float32, row-major (what `ordo positions` prints).
std::vector<double> sinusoidal_values(int64_t num_positions, int64_t dim, const PositionEncodingSpec& spec);
// kPegasusX: positions start .. start+length-1 as a float32 [length, dim] tensor, by the same
// LibTorch operations as Hugging Face (so the same bits); dim even and at least 4.
at::Tensor pegasus_x_positions(int64_t start, int64_t length, int64_t dim, double base = 10000.0);

class SinusoidalPositions {
 public:
  SinusoidalPositions() = default;
  SinusoidalPositions(int64_t max_positions, int64_t dim, const PositionEncodingSpec& spec);

  // Encodings for positions start .. start+length-1 (counted from the first real position):
  // shape [length, dim].
  at::Tensor range(int64_t start, int64_t length) const;
  // Encodings gathered at explicit table rows (fairseq computes rows from the token ids):
  // `rows` is an int64 tensor of any shape; the result appends a dim axis. Rows past the
  // table are computed on the fly (fairseq has no length limit).
  // `bound`, when known (>= 0), is at least the largest row: a bound inside the table skips
  // the reduction that finds the largest row (a decoding step knows it: padding + length).
  at::Tensor rows(const at::Tensor& rows, int64_t bound = -1) const;

  int64_t max_positions() const { return max_positions_; }
  const PositionEncodingSpec& spec() const { return spec_; }

 private:
  at::Tensor table_;           // undefined for kPegasusX (computed per call)
  at::Tensor frequencies_;     // kPegasusX: the dim/2 frequencies, float32
  int64_t max_positions_ = 0;  // usable positions after the offset
  PositionEncodingSpec spec_;
};

// Learned absolute positions (BART, mBART): a weight of the checkpoint, not a formula.
struct LearnedPositions {
  at::Tensor weight;   // [max_positions + offset, dim]
  int64_t offset = 0;  // row of position 0

  // Rows for positions start .. start+length-1: [length, dim]. Error past the table (Hugging
  // Face's embedding lookup fails there too).
  at::Tensor range(int64_t start, int64_t length) const;
};

}  // namespace ordo::nn
