#include "lab/charts/bar_chart.h"

#include <algorithm>
#include <cmath>

#include "lab/charts/svg_document.h"

namespace hvdrun::lab {
namespace {

constexpr double kLeft = ChartMargins::kLeft;
constexpr double kTop = ChartMargins::kTop;

std::string Number(double value) { return ChartNumber(value); }
std::string Coordinate(double value) { return ChartCoordinate(value); }

}  // namespace

std::string RenderSvg(const StackedBarChart& chart) {
  const PlotArea plot(chart.width, chart.height);
  const double plot_width = plot.width;
  const double plot_height = plot.height;
  double y_max = 0;
  for (const StackedBar& bar : chart.bars) {
    double total = 0;
    for (double value : bar.values) total += std::max(0.0, value);
    y_max = std::max(y_max, total);
  }
  const double y_step = TickStep(y_max);
  const double y_end = std::max(y_step, std::ceil(y_max / y_step - 1e-9) * y_step);
  const int y_ticks = static_cast<int>(std::lround(y_end / y_step));
  auto py = [&](double y) { return kTop + plot_height - y / y_end * plot_height; };
  const double slot = chart.bars.empty() ? plot_width : plot_width / static_cast<double>(chart.bars.size());
  const double bar_width = std::min(60.0, slot * 0.6);

  std::string svg = SvgDocumentStart(chart.width, chart.height, chart.title);
  svg += SvgValueGrid(plot, y_step, y_ticks, y_end);
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const double center = kLeft + slot * (static_cast<double>(i) + 0.5);
    svg += "<text x=\"" + Coordinate(center) + "\" y=\"" + Coordinate(kTop + plot_height + 16) +
           "\" text-anchor=\"middle\">" + EscapeXml(chart.bars[i].label) + "</text>\n";
  }
  svg += SvgAxes(chart.height, plot, chart.x_label, chart.y_label);

  // Legend: one row under the title, from the plot's left edge.
  double legend_x = kLeft;
  for (const BarSegmentKind& segment : chart.segments) {
    svg += "<g class=\"legend\" data-series=\"" + EscapeXml(segment.name) + "\"><rect x=\"" +
           Coordinate(legend_x) + "\" y=\"34\" width=\"14\" height=\"10\" fill=\"" + segment.color +
           "\"/><text x=\"" + Coordinate(legend_x + 20) + "\" y=\"43\">" + EscapeXml(segment.name) +
           "</text></g>\n";
    legend_x += 34 + 6.5 * static_cast<double>(segment.name.size());
  }

  for (size_t i = 0; i < chart.bars.size(); ++i) {
    const StackedBar& bar = chart.bars[i];
    const double x = kLeft + slot * (static_cast<double>(i) + 0.5) - bar_width / 2;
    double base = 0;
    svg += "<g class=\"bar\" data-bar=\"" + EscapeXml(bar.label) + "\">\n";
    for (size_t k = 0; k < bar.values.size() && k < chart.segments.size(); ++k) {
      const double value = std::max(0.0, bar.values[k]);
      if (value > 0) {
        svg += "<rect x=\"" + Coordinate(x) + "\" y=\"" + Coordinate(py(base + value)) + "\" width=\"" +
               Coordinate(bar_width) + "\" height=\"" + Coordinate(py(base) - py(base + value)) +
               "\" fill=\"" + chart.segments[k].color + "\"><title>" + EscapeXml(bar.label) + ": " +
               EscapeXml(chart.segments[k].name) + " " + Number(value) + "</title></rect>\n";
      }
      base += value;
    }
    svg += "<text x=\"" + Coordinate(x + bar_width / 2) + "\" y=\"" + Coordinate(py(base) - 4) +
           "\" text-anchor=\"middle\" fill=\"#333333\">" + Number(base) + "</text>\n";
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace hvdrun::lab
