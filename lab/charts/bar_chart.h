// StackedBarChart: one bar per cell, each a stack of segments (a step's compute, the communication
// overlapped with it, the wait on communication), drawn as a standalone SVG document as the line
// charts are (lab/charts/svg_document.h): no script, font or stylesheet, text escaped for XML.
//
// The value axis starts at 0 and ends at a round number above the tallest stack; each segment
// carries a tooltip (<title>) with its name and value, and each bar its total above it.
#ifndef HVDRUN_LAB_CHARTS_BAR_CHART_H_
#define HVDRUN_LAB_CHARTS_BAR_CHART_H_

#include <string>
#include <vector>

namespace hvdrun::lab {

struct BarSegmentKind {
  std::string name;   // "waiting on communication"
  std::string color;  // "#d62728"
};

struct StackedBar {
  std::string label;           // under the bar: "gloo 2×1"
  std::vector<double> values;  // one per segment kind, bottom first; negative values count as 0
};

struct StackedBarChart {
  std::string title;
  std::string x_label;  // under the bars' labels
  std::string y_label;
  std::vector<BarSegmentKind> segments;
  std::vector<StackedBar> bars;
  int width = 640;
  int height = 400;
};

std::string RenderSvg(const StackedBarChart& chart);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_CHARTS_BAR_CHART_H_
