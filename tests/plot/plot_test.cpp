// Pictures are checked as a person would see them: each file is rendered back to pixels by a
// real renderer (cairo's PNG reader; rsvg-convert for SVG) and cells are sampled for the
// colours their values must have.
// ctest-label: unit
#include <cairo.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>

#include <gtest/gtest.h>

#include "ordo/error.h"
#include "plot/plot.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace ordo::plot {
namespace {

using testing::TempDir;

// A picture read back as pixels.
class Pixels {
 public:
  explicit Pixels(const std::string& png) : surface_(cairo_image_surface_create_from_png(png.c_str())) {}
  ~Pixels() { cairo_surface_destroy(surface_); }
  bool ok() const { return cairo_surface_status(surface_) == CAIRO_STATUS_SUCCESS; }
  int width() const { return cairo_image_surface_get_width(surface_); }
  int height() const { return cairo_image_surface_get_height(surface_); }
  Rgb at(double x, double y) const {
    cairo_surface_flush(surface_);
    const unsigned char* data = cairo_image_surface_get_data(surface_);
    const int stride = cairo_image_surface_get_stride(surface_);
    const uint32_t p =
        *reinterpret_cast<const uint32_t*>(data + static_cast<int>(y) * stride + 4 * static_cast<int>(x));
    return {((p >> 16) & 0xff) / 255.0, ((p >> 8) & 0xff) / 255.0, (p & 0xff) / 255.0};
  }
  // Pixels within `tolerance` of `color`.
  int count(const Rgb& color, double tolerance) const {
    int n = 0;
    for (int y = 0; y < height(); ++y)
      for (int x = 0; x < width(); ++x) {
        const Rgb c = at(x, y);
        if (std::abs(c.r - color.r) <= tolerance && std::abs(c.g - color.g) <= tolerance &&
            std::abs(c.b - color.b) <= tolerance)
          ++n;
      }
    return n;
  }

 private:
  cairo_surface_t* surface_;
};

void expect_color(const Rgb& actual, const Rgb& expected, const std::string& where) {
  EXPECT_NEAR(actual.r, expected.r, 2.5 / 255) << where;
  EXPECT_NEAR(actual.g, expected.g, 2.5 / 255) << where;
  EXPECT_NEAR(actual.b, expected.b, 2.5 / 255) << where;
}

std::string svg_to_png(const TempDir& dir, const std::string& svg) {
  const std::string png = dir.file("rendered.png");
  const std::string command = "rsvg-convert -o '" + png + "' '" + svg + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return png;
}

TEST(PlotColors, ScalesHaveTheirEndsAndMiddle) {
  expect_color(scale_color(ColorScale::kDiverging, -1, -1, 1), {33 / 255.0, 102 / 255.0, 172 / 255.0}, "low");
  expect_color(scale_color(ColorScale::kDiverging, 0, -1, 1), {247 / 255.0, 247 / 255.0, 247 / 255.0}, "middle");
  expect_color(scale_color(ColorScale::kDiverging, 5, -1, 1), {178 / 255.0, 24 / 255.0, 43 / 255.0}, "clamped high");
  expect_color(scale_color(ColorScale::kSequential, 1, 0, 1), {8 / 255.0, 48 / 255.0, 107 / 255.0}, "weight 1");
}

// A 3 x 5 matrix with distinct values; every cell centre must show its value's colour.
void check_heatmap(const std::string& picture_png, const std::vector<float>& values, const HeatmapSpec& spec) {
  const Pixels pixels(picture_png);
  ASSERT_TRUE(pixels.ok());
  const HeatmapLayout layout = heatmap_layout(3, 5, spec);
  EXPECT_EQ(pixels.width(), layout.width);
  EXPECT_EQ(pixels.height(), layout.height);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 5; ++c)
      expect_color(pixels.at(layout.left + (c + 0.5) * layout.cell_width, layout.top + (r + 0.5) * layout.cell_height),
                   scale_color(spec.scale, values[r * 5 + c], spec.low, spec.high),
                   "cell " + std::to_string(r) + "," + std::to_string(c));
}

std::vector<float> sample_values() {
  std::vector<float> values;
  for (int i = 0; i < 15; ++i) values.push_back(std::sin(i * 0.7f));
  return values;
}

TEST(PlotHeatmap, PngCellsShowTheirValues) {
  TempDir dir;
  HeatmapSpec spec;
  spec.title = "sines";
  spec.x_label = "dimension";
  spec.y_label = "position";
  spec.legend_label = "value";
  const std::string png = dir.file("h.png");
  draw_heatmap(sample_values(), 3, 5, spec, png);
  check_heatmap(png, sample_values(), spec);
}

TEST(PlotHeatmap, SvgRendersBackToTheSameCells) {
  TempDir dir;
  HeatmapSpec spec;
  spec.x_labels = {"▁Der", "▁Hund", "▁läuft", "。", "</s>"};  // tokens as labels, UTF-8
  spec.y_labels = {"▁The", "▁dog", "▁runs"};
  spec.scale = ColorScale::kSequential;
  spec.low = 0;
  spec.high = 1;
  std::vector<float> weights = sample_values();
  for (float& w : weights) w = std::abs(w);
  const std::string svg = dir.file("h.svg");
  draw_heatmap(weights, 3, 5, spec, svg);
  check_heatmap(svg_to_png(dir, svg), weights, spec);
}

TEST(PlotLineChart, EachCurveIsDrawnInItsColour) {
  TempDir dir;
  std::vector<Series> series;
  for (int k = 0; k < 3; ++k) {
    Series s;
    s.name = "dim " + std::to_string(k);
    for (int p = 0; p < 100; ++p) {
      s.x.push_back(p);
      s.y.push_back(std::sin(p / (5.0 + 10 * k)));
    }
    series.push_back(std::move(s));
  }
  for (const std::string name : {"c.png", "c.svg"}) {
    const std::string file = dir.file(name);
    draw_line_chart(series, {"curves", "position", "value"}, file);
    const Pixels pixels(name == "c.png" ? file : svg_to_png(dir, file));
    ASSERT_TRUE(pixels.ok()) << name;
    for (size_t k = 0; k < series.size(); ++k)
      EXPECT_GT(pixels.count(series_color(k), 0.08), 150) << name << " series " << k;  // curve + legend swatch
    EXPECT_EQ(pixels.count(series_color(5), 0.02), 0) << name;  // no colour of a series that is not there
  }
}

TEST(PlotErrors, BadFileNamesAreNamed) {
  const std::vector<float> one = {0.5f};
  std::string error = testing::error_of([&] { draw_heatmap(one, 1, 1, {}, "/tmp/picture.bmp"); });
  EXPECT_NE(error.find("picture.bmp"), std::string::npos) << error;
  EXPECT_NE(error.find(".svg or .png"), std::string::npos) << error;
  error = testing::error_of([&] { draw_heatmap(one, 1, 1, {}, "/nonexistent/dir/p.png"); });
  EXPECT_NE(error.find("/nonexistent/dir/p.png"), std::string::npos) << error;
  error = testing::error_of([&] { draw_heatmap(one, 1, 1, {}, "/nonexistent/dir/p.svg"); });
  EXPECT_NE(error.find("/nonexistent/dir/p.svg"), std::string::npos) << error;
  error = testing::error_of([&] { draw_heatmap(one, 2, 2, {}, "/tmp/p.png"); });
  EXPECT_NE(error.find("nothing to draw"), std::string::npos) << error;
}

}  // namespace
}  // namespace ordo::plot
