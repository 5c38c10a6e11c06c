#include "lab/charts/line_chart.h"

#include <gtest/gtest.h>

namespace hvdrun::lab {
namespace {

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(LineChart, TickSteps) {
  EXPECT_DOUBLE_EQ(TickStep(8), 2);
  EXPECT_DOUBLE_EQ(TickStep(10), 2);
  EXPECT_DOUBLE_EQ(TickStep(11), 2.5);
  EXPECT_DOUBLE_EQ(TickStep(0.9), 0.2);
  EXPECT_DOUBLE_EQ(TickStep(4000), 1000);
  EXPECT_DOUBLE_EQ(TickStep(0), 1);
}

TEST(LineChart, DrawsEverySeriesStandalone) {
  LineChart chart;
  chart.title = "Speedup <gloo & mpi>";
  chart.x_label = "workers";
  chart.y_label = "speedup";
  ChartSeries gloo{"gloo", SeriesColor("gloo", 0), false, {}};
  ChartPoint one;
  one.x = 1;
  one.y = 1;
  ChartPoint two;
  two.x = 2;
  two.y = 1.8;
  two.low = 1.7;
  two.high = 1.9;
  gloo.points = {two, one};  // drawn in order of x whatever the order given
  ChartSeries ideal{"ideal", kIdealColor, true, {one}};
  chart.series = {gloo, ideal};
  std::string svg = RenderSvg(chart);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"400\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  EXPECT_NE(svg.find("Speedup &lt;gloo &amp; mpi&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_EQ(Count(svg, "<polyline"), 2u);
  EXPECT_EQ(Count(svg, "<circle"), 2u);  // the dashed ideal line has no markers
  EXPECT_EQ(Count(svg, "stroke-dasharray"), 1u);
  EXPECT_NE(svg.find("stroke=\"#1f77b4\""), std::string::npos);
  // x from 0 to 2 over 72..620, y from 0 to 2 (step 0.5) over 338..62.
  EXPECT_NE(svg.find("<polyline points=\"346.0,206.0 620.0,90.8\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("<path d=\"M620.0 105.2 V76.4\""), std::string::npos) << svg;  // the error bar
}

TEST(LineChart, BackendsKeepTheirColours) {
  EXPECT_EQ(SeriesColor("gloo", 5), "#1f77b4");
  EXPECT_EQ(SeriesColor("mpi", 0), "#ff7f0e");
  EXPECT_EQ(SeriesColor("nccl", 0), "#2ca02c");
  EXPECT_NE(SeriesColor("other", 0), SeriesColor("other", 1));
  EXPECT_EQ(EscapeXml("a'b\"c"), "a&#39;b&quot;c");
}

}  // namespace
}  // namespace hvdrun::lab
