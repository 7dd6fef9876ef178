// The long-input families attend locally in the encoder: each position sees a window or a
// block of its neighbours plus a few global positions, so that time and memory grow with the
// length instead of its square (LED's Longformer sliding window with global tokens, LongT5's
// local and transient-global attention, Pegasus-X's staggered blocks with global tokens).
// Everything else (embeddings, the layers' projections, norms and feed-forwards, the decoder)
// is the shared encoder-decoder's: a LongAttention runs the encoder's layer loop with its own
// self-attention, reusing the layers' parameters and adding the few of its own.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/linear.h"

namespace ordo::nn {

struct StackShape;
class TransformerEncoder;

enum class LongAttentionKind { kNone, kLongformer, kLongT5Local, kLongT5TransientGlobal, kPegasusX };

// config.json's settings for the kind (the encoder's; the decoder never has one).
struct LongAttentionSpec {
  LongAttentionKind kind = LongAttentionKind::kNone;
  std::vector<int64_t> attention_window;  // Longformer: per layer, even (w/2 on each side)
  int64_t local_radius = 0;               // LongT5: block_len = local_radius + 1
  int64_t global_block_size = 0;          // LongT5 transient-global
  int64_t block_size = 0;                 // Pegasus-X
  int64_t num_global_tokens = 0;          // Pegasus-X
  bool stagger_local_blocks = false;      // Pegasus-X: odd layers' blocks shifted by block_size/2
};

class LongAttention {
 public:
  virtual ~LongAttention() = default;
  // Runs `encoder`'s layers over `x`, the embedded source [batch, len, dim], and returns the
  // last layer's output [batch, len, dim] (the encoder applies its final norm).
  // attention_mask: [batch, len], 1 = token, 0 = padding. global_mask: [batch, len], 1 = a
  // global position (Longformer); undefined = the kind's default.
  virtual at::Tensor forward(const TransformerEncoder& encoder, at::Tensor x, const at::Tensor& attention_mask,
                             const at::Tensor& global_mask) const = 0;
  // The parameters it adds to the encoder's, named in the BART layout under `prefix`
  // ("model.encoder"): e.g. "layers.0.self_attn.query_global.weight", "embed_global.weight".
  virtual void visit(const std::string& prefix, const ParamVisitor& visitor) = 0;
  virtual void visit_linears(const std::string& prefix, const LinearVisitor& visitor) = 0;
  virtual void pack(GemmType type) = 0;  // inference: see Linear::pack
};

// The kind `shape.long_attention` names, for an encoder of `shape`; null for kNone.
std::shared_ptr<LongAttention> make_long_attention(const StackShape& shape);

// One per kind, each in its own file.
std::shared_ptr<LongAttention> make_longformer(const StackShape& shape);  // nn/longformer.cpp
std::shared_ptr<LongAttention> make_longt5(const StackShape& shape);      // nn/longt5_attention.cpp
std::shared_ptr<LongAttention> make_pegasus_x(const StackShape& shape);   // nn/pegasus_x_attention.cpp

}  // namespace ordo::nn
