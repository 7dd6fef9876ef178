// The message of the ordo::Error that `f` throws, or "<no error>": tests check that messages
// name the file, field or line at fault.
#pragma once

#include <functional>
#include <string>

#include "ordo/error.h"

namespace ordo::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

}  // namespace ordo::testing
