// DisplayTable: a table of formatted cells, rendered alike as Markdown, HTML and CSV for the
// report's sections (lab/report_writer.h), with the report's ways of writing figures.
#ifndef HVDRUN_LAB_DISPLAY_TABLE_H_
#define HVDRUN_LAB_DISPLAY_TABLE_H_

#include <string>
#include <vector>

#include "lab/results_table.h"

namespace hvdrun::lab {

struct DisplayTable {
  std::vector<std::string> header;
  std::vector<bool> text;  // per column: left-aligned text rather than a figure
  std::vector<std::vector<std::string>> rows;
};

// A Markdown table; '|' in a cell escaped, newlines made spaces.
std::string ToMarkdown(const DisplayTable& table);
std::string MarkdownCell(const std::string& text);
// An HTML <table id="id">, text escaped.
std::string ToHtml(const DisplayTable& table, const std::string& id);
// CSV (RFC 4180 quoting) of `header` and `rows`.
std::string ToCsv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// "259.1", "0.123", "12346": a figure for a table, to four significant digits (whole above 1000).
std::string FormatFigure(double value);
// A figure for CSV and JSON: up to 10 significant digits.
std::string Raw(double value);
// "1.05 ± 0.02" over runs ("1.05" for one run; "" for none).
std::string MeanSd(const Spread& spread);
// "0.98–1.1": lowest to highest ("" for none).
std::string Range(const Spread& spread);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_DISPLAY_TABLE_H_
