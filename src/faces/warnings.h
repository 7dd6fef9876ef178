#pragma once
// The warnings of `ordo` and `ordo serve`: one line each on stderr, "ordo: warning: ...". The
// library never prints; it hands its warnings to ModelOptions::on_warning, which the command
// line and the server point here.
#include <iostream>
#include <string>

namespace ordo::faces {

inline void print_warning(const std::string& warning) { std::cerr << "ordo: warning: " << warning << "\n"; }

}  // namespace ordo::faces
