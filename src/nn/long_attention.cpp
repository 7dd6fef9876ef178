#include "nn/long_attention.h"

#include "nn/transformer.h"

namespace ordo::nn {

std::shared_ptr<LongAttention> make_long_attention(const StackShape& shape) {
  switch (shape.long_attention.kind) {
    case LongAttentionKind::kNone: return nullptr;
    case LongAttentionKind::kLongformer: return make_longformer(shape);
    case LongAttentionKind::kLongT5Local:
    case LongAttentionKind::kLongT5TransientGlobal: return make_longt5(shape);
    case LongAttentionKind::kPegasusX: return make_pegasus_x(shape);
  }
  return nullptr;
}

}  // namespace ordo::nn
