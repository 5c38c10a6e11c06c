// DisplayTable: a table of formatted cells, rendered alike as Markdown, HTML and CSV for the
// report's sections (lab/report/report_writer.h), with the report's ways of writing figures.
#ifndef HVDRUN_LAB_REPORT_DISPLAY_TABLE_H_
#define HVDRUN_LAB_REPORT_DISPLAY_TABLE_H_

#include <string>
#include <vector>

#include "lab/report/results_table.h"

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

// The report's figures say no more than the measurement holds: three significant digits, and a
// mean beside its standard deviation only to the place of the deviation's second significant digit.
// Whole digits are never rounded away (12346, not 12300: a figure must not read as another number).
//
// "259", "0.0123", "1.6", "12346": a figure for a table, to three significant digits, trailing
// zeros dropped.
std::string FormatFigure(double value);
// A figure for CSV and JSON: up to 10 significant digits.
std::string Raw(double value);
// "0.213 ± 0.00016", "75.1 ± 0.058", "0.530 ± 0.014": the mean over runs and its standard deviation,
// the deviation to two significant digits and the mean to the same place, three significant digits
// at most ("1.05" for one run; "0.85 ± 0" for equal runs; "" for none).
std::string MeanSd(const Spread& spread);
// "0.98–1.1": lowest to highest ("" for none).
std::string Range(const Spread& spread);

}  // namespace hvdrun::lab

#endif  // HVDRUN_LAB_REPORT_DISPLAY_TABLE_H_
