// LineChart: a chart of series of (x, y) points, drawn as a standalone SVG document that needs
// nothing else to be viewed — no script, no web font, no stylesheet — so that it opens from disk,
// in a browser or an editor, and can be embedded as it is in report.html.
//
// Axes start at 0 and end at a round number above the largest value; each point may carry an
// error bar (low..high). Series keep their order and colour; a dashed series (the ideal line of a
// speedup chart) is drawn without markers. Text is escaped for XML.
#ifndef HVDRUN_LAB_CHARTS_SVG_CHART_H_
#define HVDRUN_LAB_CHARTS_SVG_CHART_H_

#include <optional>
#include <string>
#include <vector>

namespace hvdrun::lab {

struct ChartPoint {
  double x = 0;
  double y = 0;
  std::optional<double> low;  // error bar, when given: low..high
  std::optional<double> high;
};

struct ChartSeries {
  std::string name;
  std::string color;  // "#1f77b4"
  bool dashed = false;
  std::vector<ChartPoint> points;  // drawn in order of x
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<ChartSeries> series;
  int width = 640;
  int height = 400;
};

std::string RenderSvg(const LineChart& chart);

// The colour of a backend's series in every chart (gloo, mpi, nccl), and of the ideal line; other
// names get colours of a fixed palette by `index`.
std::string SeriesColor(const std::string& backend, size_t index);
inline constexpr const char* kIdealColor = "#7f7f7f";

// The step of an axis's ticks from 0 to `max`: the smallest of 1, 2, 2.5 and 5 times a power of ten
// that covers `max` in five steps or fewer (1 when `max` is not above 0).
double TickStep(double max);

// Text with &, <, >, " and ' escaped for XML and HTML.
std::string EscapeXml(const std::string& text);

// What every chart of the report shares: the plot's margins inside the SVG (room for the title, the
// legend and the axes' labels), a value as a label (4 significant digits) and a coordinate (0.1).
struct ChartMargins {
  static constexpr double kLeft = 72;
  static constexpr double kRight = 20;
  static constexpr double kTop = 62;
  static constexpr double kBottom = 50;
};
std::string ChartNumber(double value);
std::string ChartCoordinate(double value);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_CHARTS_SVG_CHART_H_
