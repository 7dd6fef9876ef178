// Pictures of what a model does: heatmaps of matrices (position encodings, attention weights)
// and line charts (one curve per dimension). Drawn with cairo; text laid out with Pango, so
// any UTF-8 token (accents, Cyrillic, CJK where a font has it) renders. SVG or PNG by the
// file's extension. A face of its own, as the CLI is: nothing here knows a model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ordo::plot {

struct Rgb {
  double r = 0, g = 0, b = 0;  // 0..1
};

enum class ColorScale {
  kDiverging,   // blue (low), white (middle), red (high): signed values such as sines
  kSequential,  // white (low) to dark blue (high): weights in [0, 1]
};

// The colour of `value` on `scale` over [low, high] (values outside are clamped).
Rgb scale_color(ColorScale scale, double value, double low, double high);

struct HeatmapSpec {
  std::string title, x_label, y_label, legend_label;
  // One label per column / row (e.g. tokens); empty: numeric ticks (0, 5, 10, ...).
  std::vector<std::string> x_labels, y_labels;
  // Numeric column ticks (no x_labels) read x_first + column: -128 .. 128 for relative
  // distances; ticks fall on round values of that reading.
  int64_t x_first = 0;
  ColorScale scale = ColorScale::kDiverging;
  double low = -1.0, high = 1.0;
};

// Where the cells are in the picture, in pixels (SVG: user units): cell (row r, column c)
// covers x in [left + c * cell_width, left + (c + 1) * cell_width), y likewise from top.
struct HeatmapLayout {
  double left = 0, top = 0, cell_width = 0, cell_height = 0;
  int width = 0, height = 0;  // the whole picture
};
HeatmapLayout heatmap_layout(int64_t rows, int64_t cols, const HeatmapSpec& spec);

// `values`: rows x cols, row-major. Writes `path` (.svg or .png); ordo::Error naming the
// file if it cannot be written or the extension is neither.
void draw_heatmap(const std::vector<float>& values, int64_t rows, int64_t cols, const HeatmapSpec& spec,
                  const std::string& path);

struct Series {
  std::string name;
  std::vector<double> x, y;
};
struct ChartSpec {
  std::string title, x_label, y_label;
};
// The colour of the i-th series (a qualitative palette, repeating after 10).
Rgb series_color(size_t index);
void draw_line_chart(const std::vector<Series>& series, const ChartSpec& spec, const std::string& path);

}  // namespace ordo::plot
