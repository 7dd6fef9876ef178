#include "cli/positions_command.h"

#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "faces/model_location.h"
#include "ordo/ordo.h"
#include "plot/plot.h"

namespace ordo::cli {
namespace {

// 8 decimals without trailing zeros: 0.84147098, -0.9899925, 0, 1 (the textbook's style).
std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.8f", value);
  std::string s = buffer;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

void print_table(const PositionTable& t) {
  std::vector<size_t> width(static_cast<size_t>(t.dim), 0);
  for (int64_t j = 0; j < t.dim; ++j) width[j] = ("dim " + std::to_string(j)).size();
  for (int64_t p = 0; p < t.length; ++p)
    for (int64_t j = 0; j < t.dim; ++j) width[j] = std::max(width[j], number(t.at(p, j)).size());
  const size_t first = std::max<size_t>(8, std::to_string(t.length).size());
  const auto cell = [](const std::string& s, size_t w) { return s + std::string(w - s.size() + 2, ' '); };
  std::string line = cell("position", first);
  for (int64_t j = 0; j < t.dim; ++j) line += cell("dim " + std::to_string(j), width[j]);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  std::cout << line << '\n';
  for (int64_t p = 0; p < t.length; ++p) {
    line = cell(std::to_string(p), first);
    for (int64_t j = 0; j < t.dim; ++j) line += cell(number(t.at(p, j)), width[j]);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << line << '\n';
  }
}

void print_csv(const PositionTable& t) {
  std::cout << "position";
  for (int64_t j = 0; j < t.dim; ++j) std::cout << ",dim" << j;
  std::cout << '\n';
  for (int64_t p = 0; p < t.length; ++p) {
    std::cout << p;
    for (int64_t j = 0; j < t.dim; ++j) std::cout << ',' << number(t.at(p, j));
    std::cout << '\n';
  }
}

void print_json(const PositionTable& t) {
  nlohmann::ordered_json out = {{"layout", position_layout_name(t.layout)},
                                {"base", t.base},
                                {"length", t.length},
                                {"dim", t.dim},
                                {"offset", t.offset}};
  if (!t.stack.empty()) out["stack"] = t.stack;  // a learned table: whose
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (int64_t p = 0; p < t.length; ++p) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (int64_t j = 0; j < t.dim; ++j) row.push_back(t.at(p, j));
    rows.push_back(std::move(row));
  }
  out["values"] = std::move(rows);
  std::cout << out.dump() << '\n';
}

std::string describe(const PositionTable& t) {
  if (t.layout == PositionLayout::kLearned)
    return "learned, " + t.stack + ", d = " + std::to_string(t.dim) + ", first row " + std::to_string(t.offset);
  std::string s = std::string(position_layout_name(t.layout)) + " layout, d = " + std::to_string(t.dim) + ", base " +
                  number(t.base);
  if (t.offset) s += ", first row " + std::to_string(t.offset);
  return s;
}

std::string describe(const RelativePositionBiasTable& t) {
  return t.family + " relative position bias, " + t.stack + ", " + (t.bidirectional ? "bidirectional" : "causal") +
         ", " + std::to_string(t.num_buckets) + " buckets, max distance " + std::to_string(t.max_distance) +
         (t.local_radius >= 0 ? ", local radius " + std::to_string(t.local_radius) : "");
}

// T5: no table of positions x dimensions but a bias per head and relative distance (key - query),
// printed one distance per line and drawn as heads x distances (and one curve per head).
int run_relative(const PositionsArgs& args, const std::string& model_dir) {
  const RelativePositionBiasTable t = model_relative_position_bias(
      model_dir, args.length ? std::optional<int64_t>(args.length) : std::nullopt, args.decoder);
  std::vector<int64_t> heads = args.dims;
  if (heads.empty())
    for (int64_t h = 0; h < t.heads; ++h) heads.push_back(h);
  for (int64_t h : heads)
    if (h < 0 || h >= t.heads)
      throw Error("--dims: head " + std::to_string(h) + " is outside 0 .. " + std::to_string(t.heads - 1) +
                  " (for a relative position bias, --dims picks heads)");
  if (!args.heatmap.empty()) {
    plot::HeatmapSpec spec;
    spec.title = describe(t);
    spec.x_label = "relative distance (key - query)";
    spec.y_label = "head";
    spec.legend_label = "bias";
    spec.x_first = t.first;
    double extent = 0;
    for (double v : t.values) extent = std::max(extent, std::abs(v));
    spec.low = -std::max(extent, 1e-6);
    spec.high = std::max(extent, 1e-6);
    std::vector<float> values(t.values.begin(), t.values.end());
    plot::draw_heatmap(values, t.heads, t.distances(), spec, args.heatmap);
  }
  if (!args.curves.empty()) {
    std::vector<plot::Series> series;
    for (int64_t h : heads) {
      plot::Series s;
      s.name = "head " + std::to_string(h);
      for (int64_t d = t.first; d <= t.last; ++d) {
        s.x.push_back(static_cast<double>(d));
        s.y.push_back(t.at(h, d));
      }
      series.push_back(std::move(s));
    }
    plot::draw_line_chart(series, {describe(t), "relative distance (key - query)", "bias"}, args.curves);
  }
  if (args.format == "table" || args.format == "csv") {
    // Rows of cells: the header, then one distance per line; csv joins them with commas, the
    // table pads each column to its widest cell.
    std::vector<std::vector<std::string>> rows(1, {"distance", "bucket"});
    for (int64_t h = 0; h < t.heads; ++h)
      rows[0].push_back((args.format == "csv" ? "head" : "head ") + std::to_string(h));
    for (int64_t d = t.first; d <= t.last; ++d) {
      rows.push_back({std::to_string(d), std::to_string(t.buckets[static_cast<size_t>(d - t.first)])});
      for (int64_t h = 0; h < t.heads; ++h) rows.back().push_back(number(t.at(h, d)));
    }
    std::vector<size_t> width(rows[0].size(), 0);
    for (const auto& row : rows)
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    for (const auto& row : rows) {
      std::string line;
      for (size_t c = 0; c < row.size(); ++c)
        line +=
            args.format == "csv" ? (c ? "," : "") + row[c] : row[c] + std::string(width[c] - row[c].size() + 2, ' ');
      while (!line.empty() && line.back() == ' ') line.pop_back();
      std::cout << line << '\n';
    }
  }
  if (args.format == "json") {
    nlohmann::ordered_json out = {{"kind", "relative_position_bias"},
                                  {"family", t.family},
                                  {"stack", t.stack},
                                  {"bidirectional", t.bidirectional},
                                  {"num_buckets", t.num_buckets},
                                  {"max_distance", t.max_distance},
                                  {"local_radius", t.local_radius},
                                  {"heads", t.heads},
                                  {"first", t.first},
                                  {"last", t.last},
                                  {"buckets", t.buckets}};
    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (int64_t h = 0; h < t.heads; ++h) {
      nlohmann::ordered_json row = nlohmann::ordered_json::array();
      for (int64_t d = t.first; d <= t.last; ++d) row.push_back(t.at(h, d));
      rows.push_back(std::move(row));
    }
    out["values"] = std::move(rows);
    std::cout << out.dump() << '\n';
  }
  return 0;
}

}  // namespace

CLI::App* add_positions_command(CLI::App& app, PositionsArgs& args) {
  CLI::App* cmd =
      app.add_subcommand("positions",
                         "Print and draw sinusoidal position encodings: a table of sines and cosines for --length\n"
                         "positions x --dim dimensions, or the table a model really uses (--model; for BART, mBART,\n"
                         "LED and Whisper the table read from the checkpoint, LED's and Whisper's without an offset\n"
                         "and of the stack's own length (Whisper's encoder: the sinusoids of its 1500 audio\n"
                         "positions, max_source_positions); for T5, which has none, the relative\n"
                         "position bias per head against the distance key - query, -N..N for the encoder, -N..0 with\n"
                         "--decoder, N = --length or relative_attention_max_distance).\n\n"
                         "  ordo positions --length 100 --dim 4 --base 100\n"
                         "  ordo positions -m en-de --length 64 --heatmap pe.png --curves curves.svg --dims 4,5,6,7");
  cmd->add_option("--length", args.length,
                  "Positions 0 .. N-1 (with --model: default max_position_embeddings, LED: the stack's\n"
                  "max_encoder/decoder_position_embeddings, Whisper: max_source/target_positions; T5:\n"
                  "distances -N..N)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  cmd->add_option("--dim", args.dim, "Dimensions of each encoding (d_model)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  cmd->add_option("--base", args.base, "Wavelength base n of the frequencies n^(-2i/d) (default 10000)")
      ->check(CLI::Range(1.0001, 1e12));
  cmd->add_option("--layout", args.layout,
                  "interleaved (textbook: sin, cos, sin, ...; default), sin-cos (Marian, Pegasus: all sines\n"
                  "then all cosines), fairseq (M2M100, NLLB) or pegasus-x (Pegasus-X: fairseq's frequencies\n"
                  "from position 0, in float32)")
      ->check(CLI::IsMember({"interleaved", "sin-cos", "fairseq", "pegasus-x"}));
  cmd->add_option("-m,--model", args.model,
                  "A model folder or bundled model name: its layout, offset and d_model (no --dim/--layout)");
  cmd->add_flag("--decoder", args.decoder,
                "With --model of a learned table (BART, mBART, LED, Whisper) or a relative position bias\n"
                "(T5): the decoder's (default: the encoder's)");
  cmd->add_option("--format", args.format, "table (default), csv, json, or none")
      ->check(CLI::IsMember({"table", "csv", "json", "none"}));
  cmd->add_option("--heatmap", args.heatmap, "Draw positions x dimensions as a heatmap: FILE.svg or FILE.png");
  cmd->add_option("--curves", args.curves, "Draw value against position for --dims: FILE.svg or FILE.png");
  cmd->add_option("--dims", args.dims, "Dimensions for --curves (default 0,1,2,3; T5: heads, default all)")
      ->delimiter(',');
  return cmd;
}

int run_positions(const PositionsArgs& args, const CLI::App& command) {
  const bool from_model = !args.model.empty();
  PositionTable table;
  if (from_model) {
    if (command.count("--dim") || command.count("--layout") || command.count("--base"))
      throw Error("--model takes the layout, dimension and base from the model; drop --dim, --layout and --base");
    const std::string model_dir = faces::resolve_model_dir(args.model, "");
    if (model_has_relative_positions(model_dir)) return run_relative(args, model_dir);
    table = model_position_encodings(model_dir, args.length ? std::optional<int64_t>(args.length) : std::nullopt,
                                     args.decoder);
    if (args.decoder && table.layout != PositionLayout::kLearned)
      throw Error("--decoder: the model's position table is computed (" +
                  std::string(position_layout_name(table.layout)) + "), the same for both stacks; drop --decoder");
  } else {
    if (args.decoder) throw Error("--decoder needs --model (a learned table is read from a model)");
    if (!args.length || !args.dim) throw Error("ordo positions needs --length and --dim (or --model)");
    table = position_encodings(args.length, args.dim, parse_position_layout(args.layout), args.base);
  }
  std::vector<int64_t> dims = args.dims.empty() ? std::vector<int64_t>{0, 1, 2, 3} : args.dims;
  if (args.dims.empty()) dims.resize(static_cast<size_t>(std::min<int64_t>(4, table.dim)));
  for (int64_t d : dims)
    if (d < 0 || d >= table.dim)
      throw Error("--dims: dimension " + std::to_string(d) + " is outside 0 .. " + std::to_string(table.dim - 1));

  // Pictures first: a bad file name fails before anything is printed.
  if (!args.heatmap.empty()) {
    plot::HeatmapSpec spec;
    spec.title = "Position encodings (" + describe(table) + ")";
    spec.x_label = "dimension";
    spec.y_label = "position";
    spec.legend_label = "value";
    std::vector<float> values(table.values.begin(), table.values.end());
    plot::draw_heatmap(values, table.length, table.dim, spec, args.heatmap);
  }
  if (!args.curves.empty()) {
    std::vector<plot::Series> series;
    for (int64_t d : dims) {
      plot::Series s;
      s.name = "dim " + std::to_string(d);
      for (int64_t p = 0; p < table.length; ++p) {
        s.x.push_back(static_cast<double>(p));
        s.y.push_back(table.at(p, d));
      }
      series.push_back(std::move(s));
    }
    plot::draw_line_chart(series, {"Position encodings (" + describe(table) + ")", "position", "value"}, args.curves);
  }
  if (args.format == "table") print_table(table);
  if (args.format == "csv") print_csv(table);
  if (args.format == "json") print_json(table);
  return 0;
}

}  // namespace ordo::cli
