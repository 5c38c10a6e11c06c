#include "lab/report/display_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "lab/charts/svg_document.h"
#include "lab/number_text.h"

namespace hvdrun::lab {
namespace {

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

// A figure keeps three significant digits; the spread beside a mean keeps two.
constexpr int kFigureDigits = 3;
constexpr int kSpreadDigits = 2;

// `value` with `decimals` digits after the point.
std::string Fixed(double value, int decimals) {
  if (!std::isfinite(value)) return NumberText("%f", value);  // kNoNumber
  char text[64];
  std::snprintf(text, sizeof(text), "%.*f", decimals, value);
  return text;
}

// The decimals that leave `digits` significant digits of `value` (not 0, finite), counted after
// rounding (0.0999 to two digits is 0.10), and never fewer than none: whole digits are not rounded
// away, so that a figure never reads as a different number.
int DecimalsFor(double value, int digits) {
  int decimals = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(value))));
  if (decimals > 0 && std::fabs(std::stod(Fixed(value, decimals))) >= std::pow(10.0, digits - decimals)) {
    --decimals;
  }
  return std::max(decimals, 0);
}

}  // namespace

std::string FormatFigure(double value) {
  if (!std::isfinite(value) || std::fabs(value) >= 999.5) return Fixed(value, 0);  // "—" when not finite
  char text[40];
  std::snprintf(text, sizeof(text), "%.*g", kFigureDigits, value);  // finite: checked above
  return text;
}

std::string Raw(double value) { return NumberText("%.10g", value); }

std::string MeanSd(const Spread& spread) {
  if (spread.n == 0) return "";
  if (spread.n < 2) return FormatFigure(spread.mean);
  if (!std::isfinite(spread.mean) || !std::isfinite(spread.sd)) return Fixed(spread.mean + spread.sd, 0);
  if (spread.sd == 0) return FormatFigure(spread.mean) + " ± 0";
  const int sd_decimals = DecimalsFor(spread.sd, kSpreadDigits);
  const int mean_decimals =
      spread.mean == 0 ? sd_decimals : std::min(sd_decimals, DecimalsFor(spread.mean, kFigureDigits));
  return Fixed(spread.mean, mean_decimals) + " ± " + Fixed(spread.sd, sd_decimals);
}

std::string Range(const Spread& spread) {
  if (spread.n == 0) return "";
  return FormatFigure(spread.min) + "–" + FormatFigure(spread.max);
}

std::string MarkdownCell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string ToMarkdown(const DisplayTable& table) {
  std::string out = "|";
  for (const std::string& cell : table.header) {
    out += ' ';
    out += MarkdownCell(cell);
    out += " |";
  }
  out += "\n|";
  for (size_t i = 0; i < table.header.size(); ++i) out += table.text[i] ? " --- |" : " ---: |";
  out += "\n";
  for (const std::vector<std::string>& row : table.rows) {
    out += "|";
    for (const std::string& cell : row) {
      out += ' ';
      out += MarkdownCell(cell);
      out += " |";
    }
    out += "\n";
  }
  return out;
}

std::string ToHtml(const DisplayTable& table, const std::string& id) {
  std::string out = "<table id=\"" + id + "\">\n<thead><tr>";
  for (size_t i = 0; i < table.header.size(); ++i) {
    out += std::string(table.text[i] ? "<th class=\"text\">" : "<th>") + EscapeXml(table.header[i]) + "</th>";
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const std::vector<std::string>& row : table.rows) {
    out += "<tr>";
    for (size_t i = 0; i < row.size(); ++i) {
      out += std::string(table.text[i] ? "<td class=\"text\">" : "<td>") + EscapeXml(row[i]) + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

std::string ToCsv(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t i = 0; i < header.size(); ++i) {
    if (i > 0) out += ',';
    out += CsvField(header[i]);
  }
  out += "\n";
  for (const std::vector<std::string>& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      if (i > 0) out += ',';
      out += CsvField(row[i]);
    }
    out += "\n";
  }
  return out;
}

}  // namespace hvdrun::lab
