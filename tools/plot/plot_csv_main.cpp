// ordo-plot-csv: line charts of a CSV's columns with the project's plot code (src/plot, the
// same charts as `ordo positions --curves`), for measurements taken by scripts
// (tools/serve/soak.sh draws docs/soak.png with it).
//
//   ordo-plot-csv --csv soak.csv --x t_s --x-scale 0.016667 --y rss_mb,fds,threads
//                 --relative-from 5 --band 5 --out soak.png --title "..." --x-label minutes
//
// --relative-from X: each column divided by its value in the first row whose x (scaled) is at
// least X, in percent (flat = 100), so columns of different units share one axis; --band P adds
// the lines 100 - P and 100 + P. Empty or non-numeric cells are gaps. PNG or SVG by extension.
#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "ordo/error.h"
#include "plot/plot.h"

namespace {

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string cell; std::getline(in, cell, sep);) out.push_back(cell);
  if (!line.empty() && line.back() == sep) out.emplace_back();
  return out;
}

double number(const std::string& cell) {
  try {
    size_t used = 0;
    const double v = std::stod(cell, &used);
    return used == cell.size() ? v : NAN;
  } catch (const std::exception&) {
    return NAN;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ordo-plot-csv: line charts of CSV columns (src/plot)"};
  std::string csv, x_column, y_columns, out, title, x_label, y_label;
  double x_scale = 1, relative_from = NAN, band = 0;
  app.add_option("--csv", csv, "CSV file with a header row")->required();
  app.add_option("--x", x_column, "Column of the x axis")->required();
  app.add_option("--y", y_columns, "Columns to draw, comma-separated")->required();
  app.add_option("--out", out, "Picture to write (.png or .svg)")->required();
  app.add_option("--x-scale", x_scale, "Multiply x by this (e.g. 1/60: seconds to minutes)");
  app.add_option("--relative-from", relative_from, "Draw each column in % of its value at the first x >= this");
  app.add_option("--band", band, "With --relative-from: also draw 100 - P and 100 + P")->check(CLI::Range(0.0, 100.0));
  app.add_option("--title", title);
  app.add_option("--x-label", x_label);
  app.add_option("--y-label", y_label);
  CLI11_PARSE(app, argc, argv);
  try {
    std::ifstream in(csv);
    if (!in) throw ordo::Error(csv + ": cannot open");
    std::string line;
    if (!std::getline(in, line)) throw ordo::Error(csv + ": empty (no header row)");
    const std::vector<std::string> header = split(line, ',');
    const auto column = [&](const std::string& name) {
      for (size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
      throw ordo::Error(csv + ": no column '" + name + "' (columns: " + line + ")");
    };
    const size_t x = column(x_column);
    std::vector<size_t> ys;
    for (const std::string& name : split(y_columns, ',')) ys.push_back(column(name));
    std::vector<ordo::plot::Series> series(ys.size());
    for (size_t k = 0; k < ys.size(); ++k) series[k].name = header[ys[k]];
    int row = 1;
    for (; std::getline(in, line);) {
      ++row;
      if (line.empty()) continue;
      const std::vector<std::string> cells = split(line, ',');
      if (cells.size() != header.size())
        throw ordo::Error(csv + ": line " + std::to_string(row) + " has " + std::to_string(cells.size()) +
                          " cells, the header " + std::to_string(header.size()));
      for (size_t k = 0; k < ys.size(); ++k) {
        series[k].x.push_back(number(cells[x]) * x_scale);
        series[k].y.push_back(number(cells[ys[k]]));
      }
    }
    if (!std::isnan(relative_from)) {
      for (ordo::plot::Series& s : series) {
        double base = NAN;
        for (size_t i = 0; i < s.x.size() && std::isnan(base); ++i)
          if (s.x[i] >= relative_from && std::isfinite(s.y[i]) && s.y[i] != 0) base = s.y[i];
        if (std::isnan(base))
          throw ordo::Error(csv + ": column '" + s.name + "' has no value at x >= " + std::to_string(relative_from));
        for (double& v : s.y) v = v / base * 100.0;
        s.name += " (100 % = " + std::to_string(static_cast<long long>(std::lround(base))) + ")";
      }
      if (band > 0 && !series.empty()) {
        const std::vector<double> xs = {series[0].x.front(), series[0].x.back()};
        series.push_back({"+" + std::to_string(static_cast<int>(band)) + " %", xs, {100 + band, 100 + band}});
        series.push_back({"-" + std::to_string(static_cast<int>(band)) + " %", xs, {100 - band, 100 - band}});
      }
    }
    ordo::plot::draw_line_chart(series, {title, x_label, y_label}, out);
  } catch (const ordo::Error& e) {
    std::cerr << "ordo-plot-csv: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
