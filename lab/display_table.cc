#include "lab/display_table.h"

#include <cmath>
#include <cstdio>

#include "lab/svg_chart.h"

namespace hvdrun::lab {
namespace {

std::string CsvField(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

std::string FormatFigure(double value) {
  char text[40];
  if (std::fabs(value) >= 1000) {
    std::snprintf(text, sizeof(text), "%.0f", value);
  } else {
    std::snprintf(text, sizeof(text), "%.4g", value);
  }
  return text;
}

std::string Raw(double value) {
  char text[40];
  std::snprintf(text, sizeof(text), "%.10g", value);
  return text;
}

std::string MeanSd(const Spread& spread) {
  if (spread.n == 0) return "";
  if (spread.n < 2) return FormatFigure(spread.mean);
  return FormatFigure(spread.mean) + " ± " + FormatFigure(spread.sd);
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
