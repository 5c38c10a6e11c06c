#include "lab/charts/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace hvdrun::lab {
namespace {

constexpr double kLeft = ChartMargins::kLeft;
constexpr double kRight = ChartMargins::kRight;
constexpr double kTop = ChartMargins::kTop;
constexpr double kBottom = ChartMargins::kBottom;
constexpr size_t kMaxValueTicks = 12;

std::string Number(double value) { return ChartNumber(value); }
std::string Coordinate(double value) { return ChartCoordinate(value); }

}  // namespace

std::string ChartNumber(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.4g", value);
  return text;
}

std::string ChartCoordinate(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f", value);
  return text;
}

std::string EscapeXml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string SeriesColor(const std::string& backend, size_t index) {
  if (backend == "gloo") return "#1f77b4";
  if (backend == "mpi") return "#ff7f0e";
  if (backend == "nccl") return "#2ca02c";
  static const char* kPalette[] = {"#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf"};
  return kPalette[index % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

double TickStep(double max) {
  if (!(max > 0) || !std::isfinite(max)) return 1;
  double raw = max / 5;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (factor * power >= raw * (1 - 1e-9)) return factor * power;
  }
  return 10 * power;
}

std::string RenderSvg(const LineChart& chart) {
  const double plot_width = chart.width - kLeft - kRight;
  const double plot_height = chart.height - kTop - kBottom;
  double x_max = 0;
  double y_max = 0;
  std::set<double> x_values;
  for (const ChartSeries& series : chart.series) {
    for (const ChartPoint& point : series.points) {
      x_max = std::max(x_max, point.x);
      y_max = std::max({y_max, point.y, point.high.value_or(0)});
      x_values.insert(point.x);
    }
  }
  const double x_step = TickStep(x_max);
  const double y_step = TickStep(y_max);
  const double x_end = std::max(x_step, std::ceil(x_max / x_step - 1e-9) * x_step);
  const double y_end = std::max(y_step, std::ceil(y_max / y_step - 1e-9) * y_step);
  const int y_ticks = static_cast<int>(std::lround(y_end / y_step));
  auto px = [&](double x) { return kLeft + x / x_end * plot_width; };
  auto py = [&](double y) { return kTop + plot_height - y / y_end * plot_height; };

  std::string svg;
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(chart.width) + "\" height=\"" +
         std::to_string(chart.height) + "\" viewBox=\"0 0 " + std::to_string(chart.width) + " " +
         std::to_string(chart.height) + "\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n";
  svg += "<title>" + EscapeXml(chart.title) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg += "<text x=\"" + Coordinate(chart.width / 2.0) +
         "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">" + EscapeXml(chart.title) + "</text>\n";

  // Grid and ticks.
  svg += "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (int tick = 0; tick <= y_ticks; ++tick) {
    const double y = tick * y_step;
    svg += "<line x1=\"" + Coordinate(kLeft) + "\" y1=\"" + Coordinate(py(y)) + "\" x2=\"" +
           Coordinate(kLeft + plot_width) + "\" y2=\"" + Coordinate(py(y)) + "\"/>\n";
  }
  svg += "</g>\n<g fill=\"#333333\">\n";
  for (int tick = 0; tick <= y_ticks; ++tick) {
    const double y = tick * y_step;
    svg += "<text x=\"" + Coordinate(kLeft - 6) + "\" y=\"" + Coordinate(py(y) + 4) +
           "\" text-anchor=\"end\">" + Number(y) + "</text>\n";
  }
  std::vector<double> x_ticks;
  if (!x_values.empty() && x_values.size() <= kMaxValueTicks) {
    x_ticks.assign(x_values.begin(), x_values.end());
  } else {
    const int ticks = static_cast<int>(std::lround(x_end / x_step));
    for (int tick = 0; tick <= ticks; ++tick) x_ticks.push_back(tick * x_step);
  }
  for (double x : x_ticks) {
    svg += "<text x=\"" + Coordinate(px(x)) + "\" y=\"" + Coordinate(kTop + plot_height + 16) +
           "\" text-anchor=\"middle\">" + Number(x) + "</text>\n";
  }
  svg += "<text x=\"" + Coordinate(kLeft + plot_width / 2) + "\" y=\"" + Coordinate(chart.height - 10.0) +
         "\" text-anchor=\"middle\">" + EscapeXml(chart.x_label) + "</text>\n";
  svg += "<text transform=\"translate(16 " + Coordinate(kTop + plot_height / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + EscapeXml(chart.y_label) + "</text>\n";
  svg += "</g>\n";
  svg += "<path d=\"M" + Coordinate(kLeft) + " " + Coordinate(kTop) + " V" + Coordinate(kTop + plot_height) +
         " H" + Coordinate(kLeft + plot_width) + "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";

  // Legend: one row under the title, ending at the plot's right edge.
  auto legend_width = [](const ChartSeries& series) {
    return 44 + 7.0 * static_cast<double>(series.name.size());
  };
  double legend_x = kLeft + plot_width;
  for (const ChartSeries& series : chart.series) legend_x -= legend_width(series);
  legend_x = std::max(kLeft, legend_x);
  for (const ChartSeries& series : chart.series) {
    svg += "<g class=\"legend\" data-series=\"" + EscapeXml(series.name) + "\">";
    svg += "<rect x=\"" + Coordinate(legend_x) + "\" y=\"34\" width=\"22\" height=\"8\" fill=\"" +
           series.color + "\"/>";
    svg +=
        "<text x=\"" + Coordinate(legend_x + 28) + "\" y=\"42\">" + EscapeXml(series.name) + "</text></g>\n";
    legend_x += legend_width(series);
  }

  for (const ChartSeries& series : chart.series) {
    std::vector<ChartPoint> points = series.points;
    std::sort(points.begin(), points.end(),
              [](const ChartPoint& a, const ChartPoint& b) { return a.x < b.x; });
    svg += "<g class=\"series\" data-series=\"" + EscapeXml(series.name) + "\">\n";
    std::string line;
    for (const ChartPoint& point : points) {
      line += Coordinate(px(point.x)) + "," + Coordinate(py(point.y)) + " ";
    }
    if (!line.empty()) line.pop_back();
    svg += "<polyline points=\"" + line + "\" fill=\"none\" stroke=\"" + series.color +
           "\" stroke-width=\"2.5\"" + (series.dashed ? " stroke-dasharray=\"6 4\"" : "") + "/>\n";
    if (!series.dashed) {
      for (const ChartPoint& point : points) {
        if (point.low && point.high && *point.high > *point.low) {
          const std::string x = Coordinate(px(point.x));
          svg += "<path d=\"M" + x + " " + Coordinate(py(*point.low)) + " V" + Coordinate(py(*point.high)) +
                 "\" stroke=\"" + series.color + "\" stroke-width=\"1.5\"/>\n";
        }
        svg += "<circle cx=\"" + Coordinate(px(point.x)) + "\" cy=\"" + Coordinate(py(point.y)) +
               "\" r=\"4.5\" fill=\"" + series.color + "\"><title>" + EscapeXml(series.name) + ": " +
               Number(point.x) + ", " + Number(point.y) + "</title></circle>\n";
      }
    }
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hvdrun::lab
