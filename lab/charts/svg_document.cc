#include "lab/charts/svg_document.h"

#include <algorithm>
#include <cmath>

#include "lab/number_text.h"

namespace hvdrun::lab {
namespace {

constexpr double kLeft = ChartMargins::kLeft;
constexpr double kTop = ChartMargins::kTop;

std::string Coordinate(double value) { return ChartCoordinate(value); }

}  // namespace

std::string ChartNumber(double value) { return NumberText("%.4g", value); }

std::string ChartCoordinate(double value) { return NumberText("%.1f", value); }

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
  if (!std::isnormal(power)) return 1;  // a max too close to 0 for a power of ten under it
  for (double factor : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (factor * power >= raw * (1 - 1e-9)) return factor * power;
  }
  return 10 * power;
}

ValueAxis::ValueAxis(double max)
    : step(TickStep(max)),
      // A max that is not a finite number above 0, or one TickStep cannot divide (step 1 for a
      // max of 1e-300), gives the axis of 0 to one step.
      end(std::isfinite(max) && max / step <= 100 ? std::max(step, std::ceil(max / step - 1e-9) * step)
                                                  : step),
      ticks(static_cast<int>(std::lround(end / step))) {}

std::string SvgDocumentStart(int width, int height, const std::string& title) {
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) +
                    "\" height=\"" + std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(width) +
                    " " + std::to_string(height) +
                    "\" font-family=\"sans-serif\" font-size=\"12\" role=\"img\">\n";
  svg += "<title>" + EscapeXml(title) + "</title>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg += "<text x=\"" + Coordinate(width / 2.0) + "\" y=\"20\" text-anchor=\"middle\" font-size=\"15\">" +
         EscapeXml(title) + "</text>\n";
  return svg;
}

std::string SvgValueGrid(const PlotArea& plot, const ValueAxis& y) {
  std::string svg = "<g stroke=\"#dddddd\" stroke-width=\"1\">\n";
  for (int tick = 0; tick <= y.ticks; ++tick) {
    const std::string at = Coordinate(plot.Y(tick * y.step, y));
    svg += "<line x1=\"" + Coordinate(kLeft) + "\" y1=\"" + at + "\" x2=\"" + Coordinate(kLeft + plot.width) +
           "\" y2=\"" + at + "\"/>\n";
  }
  svg += "</g>\n<g fill=\"#333333\">\n";
  for (int tick = 0; tick <= y.ticks; ++tick) {
    svg += "<text x=\"" + Coordinate(kLeft - 6) + "\" y=\"" + Coordinate(plot.Y(tick * y.step, y) + 4) +
           "\" text-anchor=\"end\">" + ChartNumber(tick * y.step) + "</text>\n";
  }
  return svg;
}

std::string SvgCategoryLabel(const PlotArea& plot, double x, const std::string& text) {
  return "<text x=\"" + Coordinate(x) + "\" y=\"" + Coordinate(kTop + plot.height + 16) +
         "\" text-anchor=\"middle\">" + EscapeXml(text) + "</text>\n";
}

std::string SvgAxes(int chart_height, const PlotArea& plot, const std::string& x_label,
                    const std::string& y_label) {
  std::string svg = "<text x=\"" + Coordinate(kLeft + plot.width / 2) + "\" y=\"" +
                    Coordinate(chart_height - 10.0) + "\" text-anchor=\"middle\">" + EscapeXml(x_label) +
                    "</text>\n";
  svg += "<text transform=\"translate(16 " + Coordinate(kTop + plot.height / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + EscapeXml(y_label) + "</text>\n";
  svg += "</g>\n";
  svg += "<path d=\"M" + Coordinate(kLeft) + " " + Coordinate(kTop) + " V" + Coordinate(kTop + plot.height) +
         " H" + Coordinate(kLeft + plot.width) + "\" fill=\"none\" stroke=\"#333333\" stroke-width=\"1\"/>\n";
  return svg;
}

}  // namespace hvdrun::lab
