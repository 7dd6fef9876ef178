#pragma once
// The command line's warnings: one line each on stderr, "ordo: warning: ...". The library
// never prints; it hands its warnings to ModelOptions::on_warning, which the command line and
// `ordo serve` point here.
#include <iostream>
#include <string>

namespace ordo::cli {

inline void print_warning(const std::string& warning) { std::cerr << "ordo: warning: " << warning << "\n"; }

}  // namespace ordo::cli
