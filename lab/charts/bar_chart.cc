#include "lab/charts/bar_chart.h"

#include <algorithm>

#include "lab/charts/svg_document.h"

namespace hvdrun::lab {
namespace {

constexpr double kLeft = ChartMargins::kLeft;

std::string Number(double value) { return ChartNumber(value); }
std::string Coordinate(double value) { return ChartCoordinate(value); }

// The largest bar's height: the sum of its positive segments.
double TallestBar(const std::vector<StackedBar>& bars) {
  double tallest = 0;
  for (const StackedBar& bar : bars) {
    double total = 0;
    for (double value : bar.values) total += std::max(0.0, value);
    tallest = std::max(tallest, total);
  }
  return tallest;
}

}  // namespace

std::string RenderSvg(const StackedBarChart& chart) {
  const PlotArea plot(chart.width, chart.height);
  const ValueAxis y_axis(TallestBar(chart.bars));
  auto py = [&](double y) { return plot.Y(y, y_axis); };
  const double slot = chart.bars.empty() ? plot.width : plot.width / static_cast<double>(chart.bars.size());
  const double bar_width = std::min(60.0, slot * 0.6);

  std::string svg = SvgDocumentStart(chart.width, chart.height, chart.title);
  svg += SvgValueGrid(plot, y_axis);
  for (size_t i = 0; i < chart.bars.size(); ++i) {
    svg += SvgCategoryLabel(plot, kLeft + slot * (static_cast<double>(i) + 0.5), chart.bars[i].label);
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
