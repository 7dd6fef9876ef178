#include "nn/positional_encoding.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "kernels/parallel.h"
#include "ordo/error.h"

namespace ordo::nn {

namespace {

// Pegasus-X's dim/2 frequencies exp(-i ln(base) / (dim/2 - 1)), as torch computes them: the
// factor is a float64 scalar applied to a float32 arange, the exponential in float32.
at::Tensor pegasus_x_frequencies(int64_t dim, double base) {
  if (dim < 4 || dim % 2 != 0)
    throw Error("Pegasus-X positions need an even d_model of at least 4 (got " + std::to_string(dim) + ")");
  const int64_t half = dim / 2;
  return at::exp(at::arange(half, at::kLong).to(at::kFloat) * -(std::log(base) / static_cast<double>(half - 1)));
}

// sin(p * f) in the first half, cos(p * f) in the second, for int64 positions of any shape.
at::Tensor pegasus_x_rows(const at::Tensor& positions, const at::Tensor& frequencies) {
  const at::Tensor angles = positions.unsqueeze(-1) * frequencies;  // int64 x float32 -> float32
  return at::cat({at::sin(angles), at::cos(angles)}, -1);
}

}  // namespace

at::Tensor pegasus_x_positions(int64_t start, int64_t length, int64_t dim, double base) {
  return pegasus_x_rows(at::arange(start, start + length, at::kLong), pegasus_x_frequencies(dim, base));
}

std::vector<double> sinusoidal_values(int64_t num_positions, int64_t dim, const PositionEncodingSpec& spec) {
  // Sizes come from config.json: refuse what would overflow the size arithmetic (2^56 rows
  // times 512 wraps to a tiny buffer) or could never be allocated.
  constexpr int64_t kMaxValues = int64_t{1} << 31;
  if (num_positions < 0 || dim < 1 || num_positions > kMaxValues / dim)
    throw Error("a position table of " + std::to_string(num_positions) + " positions x " + std::to_string(dim) +
                " dimensions is out of range (at most " + std::to_string(kMaxValues) + " values)");
  if (spec.layout == PositionLayout::kLearned)
    throw Error("a learned position table is a weight of the checkpoint (embed_positions.weight), not computed");
  if (spec.layout == PositionLayout::kPegasusX) {  // float32 from torch's operations, widened
    const at::Tensor rows = pegasus_x_positions(0, num_positions, dim, spec.base).contiguous();
    const float* data = rows.data_ptr<float>();
    return std::vector<double>(data, data + rows.numel());
  }
  std::vector<double> table(static_cast<size_t>(num_positions * dim), 0.0);
  const int64_t half = dim / 2;
  // What depends on the column only (pos / base^(2(j/2)/d)'s divisor, fairseq's frequencies) is
  // computed once per column, not once per value: the same operations on the same operands, so
  // the same bits, without a pow per value of a 1,024 x 1,024 table (Pegasus-large, one per stack).
  std::vector<double> divisor;
  std::vector<float> frequency;
  float fairseq_scale = 0.0f;
  if (spec.layout == PositionLayout::kFairseq) {
    // fairseq computes the frequencies in float32 with torch; mirror that arithmetic.
    fairseq_scale = static_cast<float>(std::log(spec.base) / static_cast<double>(half - 1));
    frequency.resize(static_cast<size_t>(std::max<int64_t>(half, 0)));
    for (int64_t i = 0; i < half; ++i)
      frequency[static_cast<size_t>(i)] = std::exp(static_cast<float>(i) * -fairseq_scale);
  } else {
    divisor.resize(static_cast<size_t>(dim));
    for (int64_t j = 0; j < dim; ++j)
      divisor[static_cast<size_t>(j)] = std::pow(spec.base, 2.0 * (j / 2) / static_cast<double>(dim));
  }
  // Rows on the loading threads: each row's values do not depend on which thread computes it.
  kernels::parallel_for(0, num_positions, kernels::grain_for(32 * dim), [&](int64_t first, int64_t last) {
    for (int64_t pos = first; pos < last; ++pos) {
      double* row = table.data() + pos * dim;
      if (pos == spec.zero_row) continue;
      switch (spec.layout) {
        case PositionLayout::kInterleaved:
          for (int64_t j = 0; j < dim; ++j) {
            const double angle = pos / divisor[static_cast<size_t>(j)];
            row[j] = j % 2 == 0 ? std::sin(angle) : std::cos(angle);
          }
          break;
        case PositionLayout::kSinCos:
          // Hugging Face builds the interleaved angles, then writes the even columns' sines to
          // the first half and the odd columns' cosines to the second half (dim/2 + dim%2 sines).
          {
            const int64_t sines = dim / 2 + dim % 2;
            for (int64_t j = 0; j < dim; ++j) {
              const double angle = pos / divisor[static_cast<size_t>(j)];
              if (j % 2 == 0)
                row[j / 2] = std::sin(angle);
              else
                row[sines + j / 2] = std::cos(angle);
            }
          }
          break;
        case PositionLayout::kFairseq:
          for (int64_t i = 0; i < half; ++i) {
            const float angle = static_cast<float>(pos) * frequency[static_cast<size_t>(i)];
            row[i] = std::sin(angle);  // float32 sin/cos, as torch computes them
            row[half + i] = std::cos(angle);
          }
          break;
        case PositionLayout::kLearned:
        case PositionLayout::kPegasusX: break;  // refused / computed above
      }
    }
  });
  return table;
}

at::Tensor sinusoidal_table(int64_t num_positions, int64_t dim, const PositionEncodingSpec& spec) {
  const std::vector<double> values = sinusoidal_values(num_positions, dim, spec);
  return at::from_blob(const_cast<double*>(values.data()), {num_positions, dim}, at::kDouble).to(at::kFloat);
}

SinusoidalPositions::SinusoidalPositions(int64_t max_positions, int64_t dim, const PositionEncodingSpec& spec)
    : max_positions_(max_positions), spec_(spec) {
  if (spec.layout == PositionLayout::kPegasusX)
    frequencies_ = pegasus_x_frequencies(dim, spec.base);
  else
    table_ = sinusoidal_table(max_positions + spec.offset, dim, spec);
}

at::Tensor SinusoidalPositions::range(int64_t start, int64_t length) const {
  if (start + length > max_positions_)
    throw Error("sequence of " + std::to_string(start + length) +
                " positions exceeds the model's max_position_embeddings (" + std::to_string(max_positions_) + ")");
  if (frequencies_.defined()) return pegasus_x_rows(at::arange(start, start + length, at::kLong), frequencies_);
  return table_.narrow(0, spec_.offset + start, length);
}

at::Tensor SinusoidalPositions::rows(const at::Tensor& rows, int64_t bound) const {
  if (frequencies_.defined()) return pegasus_x_rows(rows.to(at::kLong), frequencies_);
  if (bound >= 0 && bound < table_.size(0)) return at::embedding(table_, rows);
  const int64_t needed = rows.numel() > 0 ? rows.max().item<int64_t>() + 1 : 0;
  if (needed <= table_.size(0)) return at::embedding(table_, rows);
  // fairseq's table (M2M100, NLLB) grows when a sequence outgrows it, as Hugging Face's
  // M2M100SinusoidalPositionalEmbedding.make_weights does: the same formula, more rows. The
  // longer table serves this call only; the model stays immutable.
  return at::embedding(sinusoidal_table(needed, table_.size(1), spec_), rows);
}

at::Tensor LearnedPositions::range(int64_t start, int64_t length) const {
  const int64_t max_positions = weight.size(0) - offset;
  if (start + length > max_positions)
    throw Error("sequence of " + std::to_string(start + length) +
                " positions exceeds the model's max_position_embeddings (" + std::to_string(max_positions) + ")");
  return weight.narrow(0, offset + start, length);
}

}  // namespace ordo::nn
