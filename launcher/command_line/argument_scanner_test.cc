#include "launcher/command_line/argument_scanner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hvdrun {
namespace {

const std::vector<OptionSyntax>& Syntax() {
  static const std::vector<OptionSyntax> syntax = {
      {{"-np", "--num-proc"}, OptionKind::kValue, "N", false},                                    // 0
      {{"-H", "--hosts"}, OptionKind::kValue, "HOSTS", false},                                    // 1
      {{"-hostfile", "--hostfile"}, OptionKind::kValue, "FILE", false},                           // 2
      {{"-p", "--ssh-port"}, OptionKind::kValue, "PORT", false},                                  // 3
      {{"-prefix-timestamp", "--prefix-output-with-timestamp"}, OptionKind::kSwitch, "", false},  // 4
      {{"-x"}, OptionKind::kList, "NAME[=VALUE]", false},                                         // 5
      {{"--mpi-args"}, OptionKind::kValue, "ARGS", true},                                         // 6
      {{"--dry-run"}, OptionKind::kSwitch, "", false},                                            // 7
      {{"--verbose"}, OptionKind::kSwitch, "", false},                                            // 8
      {{"--log-level"}, OptionKind::kValue, "LEVEL", false},                                      // 9
      {{"--log-with-timestamp"}, OptionKind::kSwitch, "", false},                                 // 10
      {{"--output-filename"}, OptionKind::kValue, "DIR", false},                                  // 11
      {{"--network-interface", "--network-interfaces"}, OptionKind::kList, "NAME", false},        // 12
      {{"-h", "--help"}, OptionKind::kSwitch, "", false},                                         // 13
      {{"--gloo"}, OptionKind::kSwitch, "", false},                                               // 14
  };
  return syntax;
}

ScannedCommandLine Scan(const std::vector<std::string>& args) {
  StatusOr<ScannedCommandLine> scanned = ScanArguments(args, Syntax());
  EXPECT_TRUE(scanned.ok()) << scanned.status().message();
  return scanned.ok() ? scanned.value() : ScannedCommandLine{};
}

std::string Error(const std::vector<std::string>& args) {
  StatusOr<ScannedCommandLine> scanned = ScanArguments(args, Syntax());
  EXPECT_FALSE(scanned.ok());
  return scanned.ok() ? "" : scanned.status().message();
}

// "typed=value" per option found, for compact expectations.
std::vector<std::string> Found(const ScannedCommandLine& scanned) {
  std::vector<std::string> found;
  for (const ScannedOption& option : scanned.options) {
    found.push_back(Syntax()[option.option].names.back() + "=" + option.value);
  }
  return found;
}

TEST(ArgumentScanner, HorovodrunsSingleDashLongNames) {
  ScannedCommandLine scanned =
      Scan({"-np", "6", "-hostfile", "myhostfile", "-prefix-timestamp", "python", "x.py"});
  EXPECT_EQ(Found(scanned), (std::vector<std::string>{"--num-proc=6", "--hostfile=myhostfile",
                                                      "--prefix-output-with-timestamp="}));
  EXPECT_EQ(scanned.command, (std::vector<std::string>{"python", "x.py"}));
  EXPECT_EQ(scanned.options[0].typed, "-np");
}

TEST(ArgumentScanner, ValuesAfterAnEqualsSign) {
  ScannedCommandLine scanned = Scan({"-np=2", "--hosts=a:2", "--mpi-args=-gpu", "-x=A=1", "true"});
  EXPECT_EQ(Found(scanned),
            (std::vector<std::string>{"--num-proc=2", "--hosts=a:2", "--mpi-args=-gpu", "-x=A=1"}));
}

TEST(ArgumentScanner, UniquePrefixesOfLongNames) {
  EXPECT_EQ(Found(Scan({"--num", "2", "--verb", "--log-l", "INFO", "true"})),
            (std::vector<std::string>{"--num-proc=2", "--verbose=", "--log-level=INFO"}));
  // A whole name wins over the longer names it begins.
  EXPECT_EQ(Found(Scan({"--network-interface", "eth0", "true"})),
            (std::vector<std::string>{"--network-interfaces=eth0"}));
  EXPECT_EQ(Found(Scan({"-hostf", "h.txt", "true"})), (std::vector<std::string>{"--hostfile=h.txt"}));
}

TEST(ArgumentScanner, AnAmbiguousPrefixListsTheCandidates) {
  EXPECT_EQ(Error({"--log", "INFO", "true"}),
            "'--log' is ambiguous: it could be --log-level, or --log-with-timestamp; write the option's "
            "whole name");
  EXPECT_EQ(
      Error({"-pre", "true"}),
      "'-pre' is ambiguous: it could be -prefix-timestamp, or -p with the value 're'; write the option's "
      "whole name");
}

TEST(ArgumentScanner, OneLetterOptionsCarryTheirValue) {
  EXPECT_EQ(Found(Scan({"-Hserver1:2", "-p2222", "-xA=1", "-xB", "true"})),
            (std::vector<std::string>{"--hosts=server1:2", "--ssh-port=2222", "-x=A=1", "-x=B"}));
}

TEST(ArgumentScanner, UnknownOptionsAreErrorsWithTheClosestName) {
  EXPECT_EQ(Error({"--bogus", "true"}), "unknown option '--bogus' (hvdrun --help lists the options)");
  EXPECT_EQ(Error({"--verbsoe", "true"}),
            "unknown option '--verbsoe'; did you mean --verbose? (hvdrun --help lists the options)");
  EXPECT_EQ(Error({"-hostfle", "h.txt", "true"}),
            "unknown option '-hostfle'; did you mean -hostfile? (hvdrun --help lists the options)");
  EXPECT_EQ(Error({"-verbose", "true"}),
            "unknown option '-verbose'; did you mean --verbose? (hvdrun --help lists the options)");
  EXPECT_EQ(Error({"-q", "true"}), "unknown option '-q' (hvdrun --help lists the options)");
}

// Issue reproducers: an empty value swallowed the next option.
TEST(ArgumentScanner, AValueIsNeverTakenFromTheNextOption) {
  EXPECT_EQ(Error({"-np", "1", "--output-filename", "", "--gloo", "true"}),
            "--output-filename: the value is empty; expected DIR");
  EXPECT_EQ(Error({"--output-filename=", "--gloo", "true"}),
            "--output-filename: the value is empty; expected DIR");
  EXPECT_EQ(
      Error({"--output-filename", "--gloo", "true"}),
      "--output-filename: expects a value (DIR), but the next word is '--gloo', an option; a value that "
      "starts with '-' is written --output-filename=VALUE");
  EXPECT_EQ(Error({"--mpi-args", "-gpu", "true"}),
            "--mpi-args: expects a value (ARGS), but the next word is '-gpu', an option; a value that starts "
            "with '-' is written --mpi-args=VALUE");
  EXPECT_EQ(Error({"-np"}), "-np: expects a value (N) after it; none was given");
}

TEST(ArgumentScanner, ValuesThatStartWithADashWhereTheyCanOnlyBeValues) {
  // A negative number, and words with spaces (mpirun's arguments), are values.
  EXPECT_EQ(Found(Scan({"-np", "-1", "--mpi-args", "-mca btl self", "true"})),
            (std::vector<std::string>{"--num-proc=-1", "--mpi-args=-mca btl self"}));
  EXPECT_EQ(Found(Scan({"--mpi-args", "", "true"})), (std::vector<std::string>{"--mpi-args="}));
}

TEST(ArgumentScanner, SwitchesTakeNoValue) {
  EXPECT_EQ(
      Error({"--dry-run=no", "true"}),
      "--dry-run: a switch, which takes no value ('--dry-run=no'); give --dry-run alone, or leave it out");
  EXPECT_EQ(
      Error({"-prefix-timestamp=1", "true"}),
      "-prefix-timestamp: a switch, which takes no value ('-prefix-timestamp=1'); give -prefix-timestamp "
      "alone, or leave it out");
}

TEST(ArgumentScanner, AValueOptionOnceAListOptionAnyNumberOfTimes) {
  EXPECT_EQ(Error({"-np", "2", "--num-proc", "4", "true"}),
            "--num-proc: given twice ('2', then '4'); give it once");
  EXPECT_EQ(Found(Scan({"-x", "A", "-x", "B", "--verbose", "--verbose", "true"})),
            (std::vector<std::string>{"-x=A", "-x=B", "--verbose=", "--verbose="}));
}

TEST(ArgumentScanner, TheCommandStartsAtTheFirstWordThatIsNoOption) {
  ScannedCommandLine scanned = Scan({"-np", "1", "prog", "-np", "3", "--bogus"});
  EXPECT_EQ(scanned.command, (std::vector<std::string>{"prog", "-np", "3", "--bogus"}));
  EXPECT_EQ(Scan({"--", "--weird", "x"}).command, (std::vector<std::string>{"--weird", "x"}));
  EXPECT_EQ(Scan({"-", "x"}).command, (std::vector<std::string>{"-", "x"}));
  EXPECT_TRUE(Scan({"--verbose"}).command.empty());
  EXPECT_TRUE(Scan({"--verbose", "--"}).command.empty());
}

TEST(ArgumentScanner, ControlCharactersAreNotEchoed) {
  EXPECT_EQ(Error({"--bo\rgus", "true"}), "unknown option '--bo?gus' (hvdrun --help lists the options)");
}

}  // namespace
}  // namespace hvdrun
