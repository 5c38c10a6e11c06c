#include "launcher/command_line/argument_scanner.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <utility>

#include "common/error_text.h"

namespace hvdrun {
namespace {

// One way of reading a word as an option.
struct Reading {
  size_t option = 0;
  std::string typed;                 // the option's name as it stands in the word
  std::optional<std::string> value;  // the value the word itself carries
  bool attached_short = false;       // `-Hvalue`: a one-letter option and its value
};

bool StartsWith(const std::string& text, const std::string& prefix) { return text.rfind(prefix, 0) == 0; }

bool IsNegativeNumber(const std::string& word) {
  if (word.size() < 2 || word[0] != '-') return false;
  return std::all_of(word.begin() + 1, word.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.'; });
}

// A word that is read as an option where it stands, and so never as the value before it.
bool LooksLikeOption(const std::string& word) {
  if (word.size() < 2 || word[0] != '-' || IsNegativeNumber(word)) return false;
  return std::none_of(word.begin(), word.end(),
                      [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

class Scanner {
 public:
  Scanner(const std::vector<std::string>& args, const std::vector<OptionSyntax>& syntax)
      : args_(args), syntax_(syntax) {}

  StatusOr<ScannedCommandLine> Run();

 private:
  // Every reading of `word` (which starts with '-'), one per option; the exact name alone when
  // the word is one.
  std::vector<Reading> Readings(const std::string& word) const;
  void AddPrefixReadings(const std::string& prefix, const std::optional<std::string>& value, bool long_names,
                         std::vector<Reading>& readings) const;
  Status Unknown(const std::string& word) const;
  static Status Ambiguous(const std::string& word, const std::vector<Reading>& readings);
  // The value of the option read at args_[*index], taking the next word when the option's own
  // word has none.
  StatusOr<std::string> TakeValue(const Reading& reading, size_t* index) const;
  Status Record(const Reading& reading, std::string value);

  const std::vector<std::string>& args_;
  const std::vector<OptionSyntax>& syntax_;
  ScannedCommandLine scanned_;
};

StatusOr<ScannedCommandLine> Scanner::Run() {
  size_t i = 0;
  for (; i < args_.size(); ++i) {
    const std::string& word = args_[i];
    if (word == "--") {
      ++i;
      break;
    }
    if (word.size() < 2 || word[0] != '-') break;
    std::vector<Reading> readings = Readings(word);
    if (readings.empty()) return Unknown(word);
    if (readings.size() > 1) return Ambiguous(word, readings);
    const Reading& reading = readings.front();
    if (syntax_[reading.option].kind == OptionKind::kSwitch) {
      if (reading.value) {
        return Status::Error(reading.typed + ": a switch, which takes no value ('" + PrintableText(word) +
                             "'); give " + reading.typed + " alone, or leave it out");
      }
      if (Status status = Record(reading, ""); !status.ok()) return status;
      continue;
    }
    StatusOr<std::string> value = TakeValue(reading, &i);
    if (!value.ok()) return value.status();
    if (syntax_[reading.option].kind == OptionKind::kPair) {
      // The second value is always a word of its own.
      Reading second{reading.option, reading.typed, std::nullopt};
      StatusOr<std::string> more = TakeValue(second, &i);
      if (!more.ok()) return more.status();
      value = value.value() + " " + more.value();
    }
    if (Status status = Record(reading, std::move(value).value()); !status.ok()) return status;
  }
  scanned_.command.assign(args_.begin() + static_cast<std::ptrdiff_t>(std::min(i, args_.size())),
                          args_.end());
  return std::move(scanned_);
}

std::vector<Reading> Scanner::Readings(const std::string& word) const {
  const size_t equals = word.find('=');
  const std::string head = word.substr(0, equals);
  const std::optional<std::string> value =
      equals == std::string::npos ? std::nullopt : std::optional<std::string>(word.substr(equals + 1));
  for (size_t option = 0; option < syntax_.size(); ++option) {
    for (const std::string& name : syntax_[option].names) {
      if (name == head) return {Reading{option, name, value}};
    }
  }
  std::vector<Reading> readings;
  const bool long_word = StartsWith(word, "--");
  AddPrefixReadings(head, value, long_word, readings);
  if (long_word) return readings;
  // `-Hserver1:2`: a one-letter option taking a value, and the rest of the word as its value.
  const std::string letter = word.substr(0, 2);
  for (size_t option = 0; option < syntax_.size(); ++option) {
    const OptionSyntax& syntax = syntax_[option];
    const bool named = std::find(syntax.names.begin(), syntax.names.end(), letter) != syntax.names.end();
    if (!named || syntax.kind == OptionKind::kSwitch) continue;
    if (std::none_of(readings.begin(), readings.end(),
                     [&](const Reading& r) { return r.option == option; })) {
      readings.push_back(Reading{option, letter, word.substr(2), true});
    }
  }
  return readings;
}

void Scanner::AddPrefixReadings(const std::string& prefix, const std::optional<std::string>& value,
                                bool long_names, std::vector<Reading>& readings) const {
  for (size_t option = 0; option < syntax_.size(); ++option) {
    for (const std::string& name : syntax_[option].names) {
      const bool is_long = StartsWith(name, "--");
      // Single-dash names of one letter are matched whole only (`-h` is no prefix of `-hostfile`).
      if (is_long != long_names || (!is_long && name.size() <= 2) || !StartsWith(name, prefix)) continue;
      readings.push_back(Reading{option, name, value});
      break;
    }
  }
}

Status Scanner::Unknown(const std::string& word) const {
  const std::string typed = word.substr(0, word.find('='));
  std::string closest;
  size_t best = 3;  // suggest a name at most two edits away
  for (const OptionSyntax& syntax : syntax_) {
    for (const std::string& name : syntax.names) {
      const size_t distance = EditDistance(typed, name);
      if (distance < best && distance < typed.size() / 2) {
        best = distance;
        closest = name;
      }
    }
  }
  std::string message = "unknown option '" + PrintableText(typed) + "'";
  if (!closest.empty()) message += "; did you mean " + closest + "?";
  return Status::Error(message + " (hvdrun --help lists the options)");
}

Status Scanner::Ambiguous(const std::string& word, const std::vector<Reading>& readings) {
  std::string choices;
  for (size_t i = 0; i < readings.size(); ++i) {
    if (i > 0) choices += i + 1 == readings.size() ? ", or " : ", ";
    choices += readings[i].typed;
    if (readings[i].attached_short) choices += " with the value '" + PrintableText(*readings[i].value) + "'";
  }
  // Appended, not "'" + ...: GCC 12's -Wrestrict misreads that chain at -O3.
  std::string problem = PrintableText(word);
  problem.insert(0, 1, '\'');
  return Status::Error(problem.append("' is ambiguous: it could be ")
                           .append(choices)
                           .append("; write the option's whole name"));
}

StatusOr<std::string> Scanner::TakeValue(const Reading& reading, size_t* index) const {
  const OptionSyntax& syntax = syntax_[reading.option];
  std::string value;
  if (reading.value) {
    value = *reading.value;
  } else if (*index + 1 == args_.size()) {
    return Status::Error(reading.typed + ": expects a value (" + syntax.value_name +
                         ") after it; none was given");
  } else if (LooksLikeOption(args_[*index + 1])) {
    return Status::Error(reading.typed + ": expects a value (" + syntax.value_name +
                         "), but the next word is '" + PrintableText(args_[*index + 1]) +
                         "', an option; a value that starts with '-' is written " + reading.typed + "=VALUE");
  } else {
    value = args_[++*index];
  }
  if (value.empty() && !syntax.value_may_be_empty) {
    return Status::Error(reading.typed + ": the value is empty; expected " + syntax.value_name);
  }
  return value;
}

Status Scanner::Record(const Reading& reading, std::string value) {
  const OptionSyntax& syntax = syntax_[reading.option];
  if (syntax.kind == OptionKind::kValue || syntax.kind == OptionKind::kPair) {
    for (const ScannedOption& earlier : scanned_.options) {
      if (earlier.option != reading.option) continue;
      return Status::Error(reading.typed + ": given twice ('" + PrintableText(earlier.value) + "', then '" +
                           PrintableText(value) + "'); give it once");
    }
  }
  std::string typed = reading.typed;
  scanned_.options.push_back(ScannedOption{reading.option, std::move(typed), std::move(value)});
  return Status::Ok();
}

}  // namespace

StatusOr<ScannedCommandLine> ScanArguments(const std::vector<std::string>& args,
                                           const std::vector<OptionSyntax>& syntax) {
  return Scanner(args, syntax).Run();
}

}  // namespace hvdrun
