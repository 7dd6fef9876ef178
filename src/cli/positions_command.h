// `ordo positions`: the sinusoidal position-encoding table (or a model's learned one) printed
// (table, CSV, JSON) and drawn (a heatmap of positions x dimensions, curves of chosen dimensions).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace ordo::cli {

struct PositionsArgs {
  int64_t length = 0;
  int64_t dim = 0;
  double base = 10000.0;
  std::string layout = "interleaved";
  std::string model;
  std::string format = "table";
  std::string heatmap, curves;
  std::vector<int64_t> dims;
  bool decoder = false;  // a learned table (BART, mBART): the decoder's instead of the encoder's
};

CLI::App* add_positions_command(CLI::App& app, PositionsArgs& args);
int run_positions(const PositionsArgs& args, const CLI::App& command);

}  // namespace ordo::cli
