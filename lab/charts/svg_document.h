// What every SVG chart of the report shares (lab/charts/line_chart.h, lab/charts/bar_chart.h): the
// standalone document (no script, font or stylesheet, so that it opens from disk and embeds as it is
// in report.html), the plot's margins, the value grid with its labels, the axes, and how values,
// coordinates, colours and text are written. Pure functions.
#ifndef HVDRUN_LAB_CHARTS_SVG_DOCUMENT_H_
#define HVDRUN_LAB_CHARTS_SVG_DOCUMENT_H_

#include <cstddef>
#include <string>

namespace hvdrun::lab {

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

// An axis from 0 for values up to `max`: ticks `step` apart (TickStep(max)) up to `end`, the first
// tick at or above `max` (one step at the least), `ticks` steps in all.
struct ValueAxis {
  explicit ValueAxis(double max);
  double step;
  double end;
  int ticks;
};

// The plot inside a chart of `width` × `height`, within ChartMargins.
struct PlotArea {
  double width = 0;
  double height = 0;
  PlotArea(int chart_width, int chart_height)
      : width(chart_width - ChartMargins::kLeft - ChartMargins::kRight),
        height(chart_height - ChartMargins::kTop - ChartMargins::kBottom) {}

  // Where `value` lies on `axis`: as x, from the plot's left edge; as y, from its bottom edge up.
  double X(double value, const ValueAxis& axis) const {
    return ChartMargins::kLeft + value / axis.end * width;
  }
  double Y(double value, const ValueAxis& axis) const {
    return ChartMargins::kTop + height - value / axis.end * height;
  }
};

// The document's opening: the <svg> element, its <title>, a white background and the title text.
// The caller ends the document with "</svg>\n".
std::string SvgDocumentStart(int width, int height, const std::string& title);

// The horizontal grid lines of the value axis `y`, one at each of its ticks, then the opening of the
// labels' group with each line's label; the caller adds its labels along the other axis
// (SvgCategoryLabel), then SvgAxes closes the group.
std::string SvgValueGrid(const PlotArea& plot, const ValueAxis& y);

// A label of the horizontal axis, `text` (escaped here) centred under the plot at `x`.
std::string SvgCategoryLabel(const PlotArea& plot, double x, const std::string& text);

// The axes' names (`x_label` under the plot, `y_label` turned along it), the end of the labels'
// group, and the two axis lines.
std::string SvgAxes(int chart_height, const PlotArea& plot, const std::string& x_label,
                    const std::string& y_label);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_CHARTS_SVG_DOCUMENT_H_
