#include "ordo/ordo.h"

namespace ordo {
const char* version() { return "0.1.0"; }
}  // namespace ordo
