// LineChart: a chart of series of (x, y) points, drawn as a standalone SVG document that needs
// nothing else to be viewed — no script, no web font, no stylesheet — so that it opens from disk,
// in a browser or an editor, and can be embedded as it is in report.html.
//
// Axes start at 0 and end at a round number above the largest value; each point may carry an
// error bar (low..high). Series keep their order and colour; a dashed series (the ideal line of a
// speedup chart) is drawn without markers. Text is escaped for XML. The document, its grid and axes
// are every chart's (lab/charts/svg_document.h).
#ifndef HVDRUN_LAB_CHARTS_LINE_CHART_H_
#define HVDRUN_LAB_CHARTS_LINE_CHART_H_

#include <optional>
#include <string>
#include <vector>

#include "lab/charts/svg_document.h"

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

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_CHARTS_LINE_CHART_H_
