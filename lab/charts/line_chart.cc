#include "lab/charts/line_chart.h"

#include <algorithm>
#include <set>

namespace hvdrun::lab {
namespace {

constexpr double kLeft = ChartMargins::kLeft;
constexpr size_t kMaxValueTicks = 12;

std::string Number(double value) { return ChartNumber(value); }
std::string Coordinate(double value) { return ChartCoordinate(value); }

}  // namespace

std::string RenderSvg(const LineChart& chart) {
  const PlotArea plot(chart.width, chart.height);
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
  const ValueAxis x_axis(x_max);
  const ValueAxis y_axis(y_max);
  auto px = [&](double x) { return plot.X(x, x_axis); };
  auto py = [&](double y) { return plot.Y(y, y_axis); };

  std::string svg = SvgDocumentStart(chart.width, chart.height, chart.title);
  svg += SvgValueGrid(plot, y_axis);
  std::vector<double> x_ticks;
  if (!x_values.empty() && x_values.size() <= kMaxValueTicks) {
    x_ticks.assign(x_values.begin(), x_values.end());
  } else {
    for (int tick = 0; tick <= x_axis.ticks; ++tick) x_ticks.push_back(tick * x_axis.step);
  }
  for (double x : x_ticks) svg += SvgCategoryLabel(plot, px(x), Number(x));
  svg += SvgAxes(chart.height, plot, chart.x_label, chart.y_label);

  // Legend: one row under the title, ending at the plot's right edge.
  auto legend_width = [](const ChartSeries& series) {
    return 44 + 7.0 * static_cast<double>(series.name.size());
  };
  double legend_x = kLeft + plot.width;
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
