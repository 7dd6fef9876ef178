// ordo — public error type. Every failure the library reports (bad model folder, malformed
// file, invalid input text, bad option) is an ordo::Error whose message names the file and the
// field or line at fault.
#pragma once

#include <stdexcept>
#include <string>

#include "ordo/export.h"

namespace ordo {

class ORDO_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace ordo
