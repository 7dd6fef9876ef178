#include "plot/plot.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <pango/pangocairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "ordo/error.h"

namespace ordo::plot {
namespace {

constexpr const char* kTickFont = "DejaVu Sans 9";
constexpr const char* kLabelFont = "DejaVu Sans 10";
constexpr const char* kTitleFont = "DejaVu Sans Bold 12";
constexpr double kPad = 10, kTick = 4;

Rgb mix(const Rgb& a, const Rgb& b, double t) {
  return {a.r + (b.r - a.r) * t, a.g + (b.g - a.g) * t, a.b + (b.b - a.b) * t};
}
Rgb rgb255(int r, int g, int b) { return {r / 255.0, g / 255.0, b / 255.0}; }

bool ends_with(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i]) return false;
  return true;
}

// One picture: a cairo surface of the file's format, white, written out by finish().
class Canvas {
 public:
  Canvas(const std::string& path, int width, int height) : path_(path), svg_(ends_with(path, ".svg")) {
    if (!svg_ && !ends_with(path, ".png"))
      throw Error(path + ": unknown picture format (the file name must end in .svg or .png)");
    surface_ = svg_ ? cairo_svg_surface_create(path.c_str(), width, height)
                    : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, width, height);
    check(cairo_surface_status(surface_));
    // Pixels, not cairo's default points: the SVG shows at the size of the PNG.
    if (svg_) cairo_svg_surface_set_document_unit(surface_, CAIRO_SVG_UNIT_PX);
    cr_ = cairo_create(surface_);
    cairo_set_source_rgb(cr_, 1, 1, 1);
    cairo_paint(cr_);
  }
  ~Canvas() {
    if (cr_) cairo_destroy(cr_);
    if (surface_) cairo_surface_destroy(surface_);
  }
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  cairo_t* cr() const { return cr_; }
  void finish() {
    check(cairo_status(cr_));
    if (svg_) {
      cairo_surface_finish(surface_);
      check(cairo_surface_status(surface_));
    } else {
      check(cairo_surface_write_to_png(surface_, path_.c_str()));
    }
  }

 private:
  void check(cairo_status_t status) const {
    if (status != CAIRO_STATUS_SUCCESS)
      throw Error(path_ + ": cannot write the picture (" + cairo_status_to_string(status) + ")");
  }
  std::string path_;
  bool svg_;
  cairo_surface_t* surface_ = nullptr;
  cairo_t* cr_ = nullptr;
};

// Text through Pango: measured and drawn with the same layout.
struct PangoText {
  PangoText(cairo_t* cr, const std::string& text, const char* font) : layout(pango_cairo_create_layout(cr)) {
    PangoFontDescription* description = pango_font_description_from_string(font);
    pango_layout_set_font_description(layout, description);
    pango_font_description_free(description);
    pango_layout_set_text(layout, text.c_str(), static_cast<int>(text.size()));
    int w = 0, h = 0;
    pango_layout_get_pixel_size(layout, &w, &h);
    width = w;
    height = h;
  }
  ~PangoText() { g_object_unref(layout); }
  PangoText(const PangoText&) = delete;
  PangoText& operator=(const PangoText&) = delete;
  PangoLayout* layout;
  double width = 0, height = 0;
};

// A scratch context for measuring text before the picture's size is known.
struct Measurer {
  Measurer() : surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1)), cr(cairo_create(surface)) {}
  ~Measurer() {
    cairo_destroy(cr);
    cairo_surface_destroy(surface);
  }
  double width(const std::string& text, const char* font) const { return PangoText(cr, text, font).width; }
  double height(const std::string& text, const char* font) const { return PangoText(cr, text, font).height; }
  cairo_surface_t* surface;
  cairo_t* cr;
};

// Draws `text` with its anchor at (x, y): ax, ay in {0, 0.5, 1} = left/center/right and
// top/middle/bottom of the text box, after rotating by `angle` radians about the anchor.
void draw_text(cairo_t* cr, const std::string& text, const char* font, double x, double y, double ax, double ay,
               double angle = 0, Rgb color = {0, 0, 0}) {
  PangoText t(cr, text, font);
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_rotate(cr, angle);
  cairo_move_to(cr, -ax * t.width, -ay * t.height);
  cairo_set_source_rgb(cr, color.r, color.g, color.b);
  pango_cairo_show_layout(cr, t.layout);
  cairo_restore(cr);
}

std::string number_label(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", std::abs(value) < 1e-12 ? 0.0 : value);
  return buffer;
}

// A step of 1, 2 or 5 times a power of ten giving at most about `count` ticks over `range`.
double nice_step(double range, double count) {
  const double raw = range / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw) return m * magnitude;
  return 10 * magnitude;
}

// Indices 0, step, 2 step ... for numeric axes of `n` cells; with `first`, the cells whose
// reading first + i is a multiple of the step.
std::vector<int64_t> index_ticks(int64_t n, int64_t first = 0) {
  const int64_t step = n <= 1 ? 1 : std::max<int64_t>(1, static_cast<int64_t>(nice_step(static_cast<double>(n), 10)));
  std::vector<int64_t> ticks;
  for (int64_t i = ((-first) % step + step) % step; i < n; i += step) ticks.push_back(i);
  return ticks;
}

// Up to this many cells are drawn as rectangles (crisp vectors in an SVG); larger matrices
// and the colour bar as an image of one pixel per value scaled up with nearest-neighbour
// filtering, so that an SVG of a 1024 x 512 table stays small (one embedded PNG).
constexpr int64_t kMaxVectorCells = 40000;
cairo_surface_t* color_image(const std::vector<float>& values, int64_t rows, int64_t cols, const HeatmapSpec& spec) {
  cairo_surface_t* image =
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, static_cast<int>(cols), static_cast<int>(rows));
  cairo_surface_flush(image);
  unsigned char* data = cairo_image_surface_get_data(image);
  const int stride = cairo_image_surface_get_stride(image);
  for (int64_t r = 0; r < rows; ++r) {
    auto* row = reinterpret_cast<uint32_t*>(data + r * stride);
    for (int64_t c = 0; c < cols; ++c) {
      const float v = values[static_cast<size_t>(r * cols + c)];
      const Rgb color = std::isfinite(v) ? scale_color(spec.scale, v, spec.low, spec.high) : Rgb{0.5, 0.5, 0.5};
      row[c] = (static_cast<uint32_t>(std::lround(color.r * 255)) << 16) |
               (static_cast<uint32_t>(std::lround(color.g * 255)) << 8) |
               static_cast<uint32_t>(std::lround(color.b * 255));
    }
  }
  cairo_surface_mark_dirty(image);
  return image;
}

void paint_image(cairo_t* cr, cairo_surface_t* image, double x, double y, double sx, double sy, double w, double h) {
  cairo_save(cr);
  cairo_translate(cr, x, y);
  cairo_scale(cr, sx, sy);
  cairo_set_source_surface(cr, image, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_rectangle(cr, 0, 0, w, h);
  cairo_fill(cr);
  cairo_restore(cr);
  cairo_surface_destroy(image);
}

struct HeatmapGeometry {
  HeatmapLayout layout;
  double y_tick_width = 0, x_tick_extent = 0, legend_height = 0, legend_left = 0;
};

HeatmapGeometry geometry(int64_t rows, int64_t cols, const HeatmapSpec& spec) {
  const Measurer m;
  HeatmapGeometry g;
  HeatmapLayout& l = g.layout;
  const bool x_tokens = !spec.x_labels.empty(), y_tokens = !spec.y_labels.empty();
  l.cell_width = x_tokens ? 22 : std::clamp<double>(std::floor(960.0 / std::max<int64_t>(cols, 1)), 1, 24);
  l.cell_height = y_tokens ? 22 : std::clamp<double>(std::floor(640.0 / std::max<int64_t>(rows, 1)), 1, 24);
  for (const std::string& s : spec.y_labels) g.y_tick_width = std::max(g.y_tick_width, m.width(s, kTickFont));
  if (!y_tokens) g.y_tick_width = m.width(number_label(static_cast<double>(std::max<int64_t>(rows - 1, 0))), kTickFont);
  for (const std::string& s : spec.x_labels) g.x_tick_extent = std::max(g.x_tick_extent, m.width(s, kTickFont));
  if (!x_tokens) g.x_tick_extent = m.height("0", kTickFont);
  const double label_height = m.height("Ag", kLabelFont);
  const double title_height = spec.title.empty() ? 0 : m.height(spec.title, kTitleFont) + kPad;
  const double grid_width = l.cell_width * static_cast<double>(cols),
               grid_height = l.cell_height * static_cast<double>(rows);
  l.left = std::ceil(kPad + (spec.y_label.empty() ? 0 : label_height + 6) + g.y_tick_width + kTick + 4);
  l.top = std::ceil(kPad + title_height);
  g.legend_height = std::max(grid_height, 80.0);
  double legend_ticks = 0;
  for (double v : {spec.low, (spec.low + spec.high) / 2, spec.high})
    legend_ticks = std::max(legend_ticks, m.width(number_label(v), kTickFont));
  g.legend_left = l.left + grid_width + 20;
  const double right = 20 + 14 + kTick + 4 + legend_ticks + (spec.legend_label.empty() ? 0 : 6 + label_height) + kPad;
  const double bottom = kTick + 4 + g.x_tick_extent + (spec.x_label.empty() ? 0 : 6 + label_height) + kPad;
  l.width = static_cast<int>(std::ceil(l.left + grid_width + right));
  if (!spec.title.empty())
    l.width = std::max(l.width, static_cast<int>(std::ceil(m.width(spec.title, kTitleFont) + 2 * kPad)));
  l.height = static_cast<int>(std::ceil(l.top + std::max(grid_height, g.legend_height) + bottom));
  return g;
}

}  // namespace

Rgb scale_color(ColorScale scale, double value, double low, double high) {
  double t = high > low ? (value - low) / (high - low) : 0.5;
  t = std::clamp(t, 0.0, 1.0);
  if (scale == ColorScale::kSequential) return mix(rgb255(247, 251, 255), rgb255(8, 48, 107), t);
  // ColorBrewer RdBu's ends and middle.
  return t < 0.5 ? mix(rgb255(33, 102, 172), rgb255(247, 247, 247), t * 2)
                 : mix(rgb255(247, 247, 247), rgb255(178, 24, 43), (t - 0.5) * 2);
}

Rgb series_color(size_t index) {
  static const Rgb palette[] = {
      rgb255(31, 119, 180), rgb255(255, 127, 14),  rgb255(44, 160, 44),   rgb255(214, 39, 40),  rgb255(148, 103, 189),
      rgb255(140, 86, 75),  rgb255(227, 119, 194), rgb255(127, 127, 127), rgb255(188, 189, 34), rgb255(23, 190, 207)};
  return palette[index % 10];
}

HeatmapLayout heatmap_layout(int64_t rows, int64_t cols, const HeatmapSpec& spec) {
  return geometry(rows, cols, spec).layout;
}

void draw_heatmap(const std::vector<float>& values, int64_t rows, int64_t cols, const HeatmapSpec& spec,
                  const std::string& path) {
  if (rows < 1 || cols < 1 || values.size() != static_cast<size_t>(rows * cols))
    throw Error(path + ": nothing to draw (a " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix)");
  if (rows > 32768 || cols > 32768) throw Error(path + ": a heatmap is limited to 32768 rows and columns");
  if ((!spec.x_labels.empty() && spec.x_labels.size() != static_cast<size_t>(cols)) ||
      (!spec.y_labels.empty() && spec.y_labels.size() != static_cast<size_t>(rows)))
    throw Error(path + ": one label per row and per column is needed");
  const HeatmapGeometry g = geometry(rows, cols, spec);
  const HeatmapLayout& l = g.layout;
  Canvas canvas(path, l.width, l.height);
  cairo_t* cr = canvas.cr();
  const double grid_width = l.cell_width * static_cast<double>(cols),
               grid_height = l.cell_height * static_cast<double>(rows);

  if (rows * cols <= kMaxVectorCells) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const float v = values[static_cast<size_t>(r * cols + c)];
        const Rgb color = std::isfinite(v) ? scale_color(spec.scale, v, spec.low, spec.high) : Rgb{0.5, 0.5, 0.5};
        cairo_set_source_rgb(cr, color.r, color.g, color.b);
        cairo_rectangle(cr, l.left + static_cast<double>(c) * l.cell_width,
                        l.top + static_cast<double>(r) * l.cell_height, l.cell_width, l.cell_height);
        cairo_fill(cr);
      }
  } else {
    paint_image(cr, color_image(values, rows, cols, spec), l.left, l.top, l.cell_width, l.cell_height,
                static_cast<double>(cols), static_cast<double>(rows));
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, l.left - 0.5, l.top - 0.5, grid_width + 1, grid_height + 1);
  cairo_stroke(cr);

  if (!spec.title.empty()) draw_text(cr, spec.title, kTitleFont, l.width / 2.0, kPad, 0.5, 0);
  // Row ticks on the left, column ticks below (token labels read upwards).
  const auto row_ticks = spec.y_labels.empty() ? index_ticks(rows) : [&] {
    std::vector<int64_t> all(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }();
  for (int64_t r : row_ticks) {
    const double y = l.top + (static_cast<double>(r) + 0.5) * l.cell_height;
    cairo_move_to(cr, l.left - 0.5, y);
    cairo_line_to(cr, l.left - 0.5 - kTick, y);
    const std::string text =
        spec.y_labels.empty() ? number_label(static_cast<double>(r)) : spec.y_labels[static_cast<size_t>(r)];
    draw_text(cr, text, kTickFont, l.left - kTick - 4, y, 1, 0.5);
  }
  const double below = l.top + grid_height + 0.5;
  const auto column_ticks = spec.x_labels.empty() ? index_ticks(cols, spec.x_first) : [&] {
    std::vector<int64_t> all(static_cast<size_t>(cols));
    for (int64_t i = 0; i < cols; ++i) all[static_cast<size_t>(i)] = i;
    return all;
  }();
  for (int64_t c : column_ticks) {
    const double x = l.left + (static_cast<double>(c) + 0.5) * l.cell_width;
    cairo_move_to(cr, x, below);
    cairo_line_to(cr, x, below + kTick);
    if (spec.x_labels.empty())
      draw_text(cr, number_label(static_cast<double>(spec.x_first + c)), kTickFont, x, below + kTick + 2, 0.5, 0);
    else
      draw_text(cr, spec.x_labels[static_cast<size_t>(c)], kTickFont, x, below + kTick + 2, 1, 0.5, -M_PI / 2);
  }
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_stroke(cr);
  if (!spec.x_label.empty())
    draw_text(cr, spec.x_label, kLabelFont, l.left + grid_width / 2, below + kTick + 2 + g.x_tick_extent + 6, 0.5, 0);
  if (!spec.y_label.empty()) draw_text(cr, spec.y_label, kLabelFont, kPad, l.top + grid_height / 2, 0.5, 0, -M_PI / 2);

  // Colour bar: high at the top, with the low, middle and high values.
  constexpr int kSteps = 256;
  std::vector<float> bar(kSteps);
  for (int i = 0; i < kSteps; ++i) bar[i] = static_cast<float>(spec.high - (spec.high - spec.low) * i / (kSteps - 1));
  paint_image(cr, color_image(bar, kSteps, 1, spec), g.legend_left, l.top, 14, g.legend_height / kSteps, 1, kSteps);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, g.legend_left - 0.5, l.top - 0.5, 15, g.legend_height + 1);
  double widest = 0;
  for (const auto& [value, y] : {std::pair{spec.high, l.top},
                                 {(spec.low + spec.high) / 2, l.top + g.legend_height / 2},
                                 {spec.low, l.top + g.legend_height}}) {
    cairo_move_to(cr, g.legend_left + 14.5, y);
    cairo_line_to(cr, g.legend_left + 14.5 + kTick, y);
    draw_text(cr, number_label(value), kTickFont, g.legend_left + 14.5 + kTick + 4, y, 0, 0.5);
    widest = std::max(widest, PangoText(cr, number_label(value), kTickFont).width);
  }
  cairo_stroke(cr);
  if (!spec.legend_label.empty())
    draw_text(cr, spec.legend_label, kLabelFont, g.legend_left + 14.5 + kTick + 4 + widest + 6,
              l.top + g.legend_height / 2, 0.5, 1, M_PI / 2);
  canvas.finish();
}

void draw_line_chart(const std::vector<Series>& series, const ChartSpec& spec, const std::string& path) {
  double x_low = INFINITY, x_high = -INFINITY, y_low = INFINITY, y_high = -INFINITY;
  for (const Series& s : series) {
    if (s.x.size() != s.y.size())
      throw Error(path + ": series '" + s.name + "' has " + std::to_string(s.x.size()) + " x values and " +
                  std::to_string(s.y.size()) + " y values");
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i])) continue;
      x_low = std::min(x_low, s.x[i]), x_high = std::max(x_high, s.x[i]);
      y_low = std::min(y_low, s.y[i]), y_high = std::max(y_high, s.y[i]);
    }
  }
  if (!(x_low <= x_high)) throw Error(path + ": nothing to draw (no finite points)");
  if (x_low == x_high) x_low -= 1, x_high += 1;
  if (y_low == y_high) y_low -= 1, y_high += 1;
  const double y_step = nice_step(y_high - y_low, 6), x_step = nice_step(x_high - x_low, 8);
  y_low = std::floor(y_low / y_step) * y_step, y_high = std::ceil(y_high / y_step) * y_step;

  const Measurer m;
  double y_tick_width = 0;
  for (double v = y_low; v <= y_high + y_step / 2; v += y_step)
    y_tick_width = std::max(y_tick_width, m.width(number_label(v), kTickFont));
  const double label_height = m.height("Ag", kLabelFont), tick_height = m.height("0", kTickFont);
  const double plot_width = 760, plot_height = 380;
  const double left = std::ceil(kPad + (spec.y_label.empty() ? 0 : label_height + 6) + y_tick_width + kTick + 4);
  const double top = std::ceil(kPad + (spec.title.empty() ? 0 : m.height(spec.title, kTitleFont) + kPad));
  const int width = static_cast<int>(left + plot_width + 2 * kPad);
  const int height = static_cast<int>(top + plot_height + kTick + 4 + tick_height +
                                      (spec.x_label.empty() ? 0 : 6 + label_height) + kPad);
  const auto px = [&](double x) { return left + (x - x_low) / (x_high - x_low) * plot_width; };
  const auto py = [&](double y) { return top + (y_high - y) / (y_high - y_low) * plot_height; };

  Canvas canvas(path, width, height);
  cairo_t* cr = canvas.cr();
  cairo_set_line_width(cr, 1);
  // Grid and ticks.
  for (double v = y_low; v <= y_high + y_step / 2; v += y_step) {
    cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
    cairo_move_to(cr, left, std::round(py(v)) + 0.5);
    cairo_line_to(cr, left + plot_width, std::round(py(v)) + 0.5);
    cairo_stroke(cr);
    draw_text(cr, number_label(v), kTickFont, left - kTick - 4, py(v), 1, 0.5);
  }
  for (double v = std::ceil(x_low / x_step) * x_step; v <= x_high + x_step / 1e6; v += x_step)
    draw_text(cr, number_label(v), kTickFont, px(v), top + plot_height + kTick + 2, 0.5, 0);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_rectangle(cr, left - 0.5, top - 0.5, plot_width + 1, plot_height + 1);
  cairo_stroke(cr);
  // Curves, clipped to the plot area.
  cairo_save(cr);
  cairo_rectangle(cr, left, top, plot_width, plot_height);
  cairo_clip(cr);
  cairo_set_line_width(cr, 1.6);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (size_t k = 0; k < series.size(); ++k) {
    const Rgb color = series_color(k);
    cairo_set_source_rgb(cr, color.r, color.g, color.b);
    bool open = false;
    for (size_t i = 0; i < series[k].x.size(); ++i) {
      if (!std::isfinite(series[k].x[i]) || !std::isfinite(series[k].y[i])) {
        open = false;
        continue;
      }
      if (open)
        cairo_line_to(cr, px(series[k].x[i]), py(series[k].y[i]));
      else
        cairo_move_to(cr, px(series[k].x[i]), py(series[k].y[i]));
      open = true;
    }
    cairo_stroke(cr);
  }
  cairo_restore(cr);
  // Legend, top right inside the plot.
  double legend_width = 0;
  for (const Series& s : series) legend_width = std::max(legend_width, m.width(s.name, kTickFont));
  const double row = tick_height + 2, box_width = legend_width + 34,
               box_height = row * static_cast<double>(series.size()) + 8;
  const double box_left = left + plot_width - box_width - 8, box_top = top + 8;
  if (!series.empty()) {
    cairo_set_source_rgba(cr, 1, 1, 1, 0.85);
    cairo_rectangle(cr, box_left, box_top, box_width, box_height);
    cairo_fill_preserve(cr);
    cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cairo_stroke(cr);
    for (size_t k = 0; k < series.size(); ++k) {
      const Rgb color = series_color(k);
      const double y = box_top + 4 + row * (static_cast<double>(k) + 0.5);
      cairo_set_source_rgb(cr, color.r, color.g, color.b);
      cairo_set_line_width(cr, 2.5);
      cairo_move_to(cr, box_left + 6, y);
      cairo_line_to(cr, box_left + 24, y);
      cairo_stroke(cr);
      draw_text(cr, series[k].name, kTickFont, box_left + 30, y, 0, 0.5);
    }
  }
  if (!spec.title.empty()) draw_text(cr, spec.title, kTitleFont, left + plot_width / 2, kPad, 0.5, 0);
  if (!spec.x_label.empty())
    draw_text(cr, spec.x_label, kLabelFont, left + plot_width / 2, top + plot_height + kTick + 4 + tick_height + 6, 0.5,
              0);
  if (!spec.y_label.empty()) draw_text(cr, spec.y_label, kLabelFont, kPad, top + plot_height / 2, 0.5, 0, -M_PI / 2);
  canvas.finish();
}

}  // namespace ordo::plot
