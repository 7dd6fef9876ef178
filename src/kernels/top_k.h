// The k largest entries of each row of a float matrix, best first, in one streaming pass.
// Beam search asks for 2 x beams of beams x vocabulary candidates per sentence (8 of 232,404
// for the opus-mt vocabulary): at::topk copies and partially sorts each row, which cost
// more than the search's other work together; a k-slot insertion list rarely takes an entry
// after the first few hundred.
#pragma once

#include <cstdint>
#include <vector>

#include <ATen/ATen.h>

namespace ordo::kernels {

struct TopK {
  std::vector<float> values;     // [rows * k], row-major, descending within a row
  std::vector<int64_t> indices;  // column of each value; equal values: the lower column first
};

// scores: [rows, n] float32 with n >= k. offsets: nullptr, or one value per `segment` columns
// (n a multiple of it), added to each entry of its segment before ranking, as if the matrix
// held the sums: row r, columns [i * segment, (i + 1) * segment) get offsets[r * n / segment + i].
// Beam search ranks log-probabilities plus each beam's running score this way, without a pass
// that writes the sums.
TopK top_k_rows(const at::Tensor& scores, int64_t k, const float* offsets = nullptr, int64_t segment = 0);

// scores.argmax(-1) of a [rows, n] matrix (n >= 1) with LibTorch's answer: the first NaN of a
// row if it has one, else its first largest entry; [rows] int64. Greedy search takes one a step
// over the whole vocabulary, where at::argmax's reduction cost 6 % of an int8 step of 32 rows.
at::Tensor argmax_rows(const at::Tensor& scores);

}  // namespace ordo::kernels
