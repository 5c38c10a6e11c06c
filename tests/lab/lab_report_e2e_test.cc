// `hvdrun-lab report` on fixture results whose figures were chosen to be checked by hand, and its
// report.html rendered by headless Chromium.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "tests/e2e/scratch_dir.h"
#include "tests/lab/installed_lab.h"
#include "tests/lab/png_image.h"

namespace hvdrun::lab_test {
namespace {

namespace fs = std::filesystem;
using e2e::ProcessResult;
using e2e::ReadFileBytes;
using e2e::ScratchDir;

constexpr const char* kChromium = "/usr/bin/chromium";

// A copy of tests/lab/fixtures/scaling (hvdrun-lab report writes beside the results).
// The fixture, copied into `scratch`, after `hvdrun-lab report` on it: its directory; "", and a
// failure, when the report failed.
std::string ReportOnFixture(const ScratchDir& scratch) {
  std::string dir = scratch.path() + "/scaling";
  fs::copy(std::string(HVDRUN_LAB_FIXTURES_DIR) + "/scaling", dir, fs::copy_options::recursive);
  ProcessResult result = RunLab({"report", dir});
  if (result.exit_code != 0) {
    ADD_FAILURE() << result;
    return "";
  }
  return dir;
}

const nlohmann::json& Row(const nlohmann::json& report, const std::string& cell) {
  for (const nlohmann::json& row : report["speedup"]) {
    if (row["cell"] == cell) return row;
  }
  static const nlohmann::json kNone;
  ADD_FAILURE() << "no row for " << cell;
  return kNone;
}

TEST(LabReport, FiguresMatchTheHandComputedValuesOfTheFixture) {
  ScratchDir scratch;
  const std::string dir = ReportOnFixture(scratch);
  ASSERT_FALSE(dir.empty());
  nlohmann::json report = ReadJson(dir + "/report.json");
  ASSERT_EQ(report["speedup"].size(), 6u) << report.dump(2);
  const std::string tail = "_servers-1_model-resnet50";
  struct Expected {
    std::string cell;
    int runs_ok;
    double step_time, step_sd, per_worker, total, speedup;
  };
  // Per run: step time = mean over ranks, throughput per worker = mean over ranks, total = sum over
  // ranks; then the mean over the ok runs. Speedup = total / total of the 1-worker cell.
  const Expected expected[] = {
      // gloo 1: runs 0.40 s, 80 img/s and 0.42 s, 76 img/s.
      {"backend-gloo_np-1" + tail, 2, 0.41, std::sqrt(0.0002), 78, 78, 1},
      // gloo 2: runs (0.50+0.54)/2 = 0.52 and (0.52+0.56)/2 = 0.54; per worker 62 and 60; totals 124, 120.
      {"backend-gloo_np-2" + tail, 2, 0.53, std::sqrt(0.0002), 61, 122, 122.0 / 78},
      // gloo 4: both runs (0.80+0.80+0.90+0.90)/4 = 0.85; 38 per worker; 152 in all.
      {"backend-gloo_np-4" + tail, 2, 0.85, 0, 38, 152, 152.0 / 78},
      // mpi 1: run 1 failed; run 2 0.38 s, 84 img/s.
      {"backend-mpi_np-1" + tail, 1, 0.38, 0, 84, 84, 1},
      // mpi 2: both runs (0.45+0.47)/2 = 0.46; (71+69)/2 = 70; 140.
      {"backend-mpi_np-2" + tail, 2, 0.46, 0, 70, 140, 140.0 / 84},
      // mpi 4: run 1 only (run 2 is a .partial directory): 0.61 s; 52; 208.
      {"backend-mpi_np-4" + tail, 1, 0.61, 0, 52, 208, 208.0 / 84},
  };
  for (const Expected& want : expected) {
    const nlohmann::json& row = Row(report, want.cell);
    EXPECT_EQ(row["runs_ok"], want.runs_ok) << want.cell;
    EXPECT_NEAR(row["step_time_s"]["mean"].get<double>(), want.step_time, 1e-12) << want.cell;
    EXPECT_NEAR(row["step_time_s"]["sd"].get<double>(), want.step_sd, 1e-12) << want.cell;
    EXPECT_NEAR(row["throughput_per_worker"]["mean"].get<double>(), want.per_worker, 1e-9) << want.cell;
    EXPECT_NEAR(row["total_throughput"]["mean"].get<double>(), want.total, 1e-9) << want.cell;
    EXPECT_NEAR(row["speedup"].get<double>(), want.speedup, 1e-12) << want.cell;
    EXPECT_NEAR(row["efficiency"].get<double>(), want.speedup / row["workers"].get<int>(), 1e-12)
        << want.cell;
  }
  // The spread over ranks of gloo 2: 0.50..0.56 s, 58..64 img/s.
  const nlohmann::json& gloo2 = Row(report, "backend-gloo_np-2" + tail);
  EXPECT_NEAR(gloo2["step_time_s_over_ranks"]["min"].get<double>(), 0.50, 1e-12);
  EXPECT_NEAR(gloo2["step_time_s_over_ranks"]["max"].get<double>(), 0.56, 1e-12);
  EXPECT_NEAR(gloo2["throughput_per_worker_over_ranks"]["min"].get<double>(), 58, 1e-12);
  EXPECT_NEAR(gloo2["throughput_per_worker_over_ranks"]["max"].get<double>(), 64, 1e-12);

  const std::string csv = ReadFileBytes(dir + "/speedup.csv");
  EXPECT_NE(csv.find("backend-gloo_np-2" + tail + ",gloo,resnet50,1,2,2,2,0,0.53,"), std::string::npos)
      << csv;
  const std::string runs = ReadFileBytes(dir + "/runs.csv");
  EXPECT_NE(runs.find("backend-mpi_np-1" + tail + ",1,failed,11,hvdrun ended with exit code 3"),
            std::string::npos)
      << runs;
  EXPECT_NE(runs.find("backend-mpi_np-4" + tail + ",2,not run,0,"), std::string::npos) << runs;
  EXPECT_NE(runs.find("backend-nccl_np-4" + tail + ",0,skipped,0,'nccl' needs one GPU per process"),
            std::string::npos)
      << runs;

  // The OS comes from hvdrun's host facts of a run; the rest from this machine, said so.
  const std::string environment = ReadFileBytes(dir + "/environment.csv");
  EXPECT_NE(
      environment.find("OS,Fixture OS 1.0,\"hvdrun host facts: /etc/os-release, hvdrun/hosts/localhost.json "
                       "(localhost)\""),
      std::string::npos)
      << environment;
  // The MPI version, read on this machine when the report was written.
  const size_t mpi = environment.find("\nMPI,");
  ASSERT_NE(mpi, std::string::npos) << environment;
  const std::string mpi_line = environment.substr(mpi + 1, environment.find('\n', mpi + 1) - mpi - 1);
  EXPECT_NE(mpi_line.find(", read now"), std::string::npos) << mpi_line;

  const std::string md = ReadFileBytes(dir + "/report.md");
  for (const char* section : {"## Speedup", "## Environment", "## Skipped cells", "## Failed runs",
                              "## Runs not made yet", "![Speedup](speedup.svg)"}) {
    EXPECT_NE(md.find(section), std::string::npos) << section;
  }
  // Threads per process and CPUs (= processes × threads) from the ranks' reports; MPI's do not say.
  EXPECT_NE(md.find("| gloo | 1 | 2 | 1 | 2 | 0.530 ± 0.014 | 0.5–0.56 | 61.0 ± 1.4 | 58–64 | 122 ± 2.8 | "
                    "1.56 | 78.2 % | 2/2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gloo | 1 | 1 | 2 | 2 | 0.410 ± 0.014 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| mpi | 1 | 2 | — | — | 0.46 ± "), std::string::npos) << md;
}

// The fixture's Gloo ranks report hvdrun-trainer's timing figures (compute_time_s, comm_wait_s,
// comm_overlapped_s, bytes_reduced_per_step, threads); MPI's do not, and get no breakdown.
TEST(LabReport, StepBreakdownMatchesTheHandComputedValuesOfTheFixture) {
  ScratchDir scratch;
  const std::string dir = ReportOnFixture(scratch);
  ASSERT_FALSE(dir.empty());
  nlohmann::json report = ReadJson(dir + "/report.json");
  ASSERT_EQ(report["breakdown"].size(), 1u) << report["breakdown"].dump(2);
  const nlohmann::json& table = report["breakdown"][0];
  ASSERT_EQ(table["rows"].size(), 3u) << table.dump(2);
  const std::string tail = "_servers-1_model-resnet50";
  struct Expected {
    std::string cell;
    double compute, overlapped, wait, algbw, busbw;
  };
  const Expected expected[] = {
      // gloo 1: compute 0.40 and 0.42 s, nothing communicated.
      {"backend-gloo_np-1" + tail, 0.41, 0, 0, -1, -1},
      // gloo 2, run 1: ranks (0.44, 0.06, 0.10) and (0.46, 0.08, 0.10): compute 0.45, wait 0.07, in flight
      // 0.10; 1e8 bytes in 0.17 s = 0.5882 GB/s. Run 2: 0.46, 0.08, 0.13; 1e8 in 0.21 s = 0.4762 GB/s.
      // busbw = algbw × 2(2 − 1)/2.
      {"backend-gloo_np-2" + tail, 0.455, 0.115, 0.075, (1e8 / 0.17 + 1e8 / 0.21) / 2 / 1e9,
       (1e8 / 0.17 + 1e8 / 0.21) / 2 / 1e9},
      // gloo 4, both runs: compute (0.6 + 0.6 + 0.7 + 0.7)/4 = 0.65, wait 0.2, in flight 0.05; 1e8 bytes in
      // 0.25 s = 0.4 GB/s, busbw 0.4 × 2·3/4 = 0.6.
      {"backend-gloo_np-4" + tail, 0.65, 0.05, 0.2, 0.4, 0.6},
  };
  for (size_t i = 0; i < 3; ++i) {
    const Expected& want = expected[i];
    const nlohmann::json& row = table["rows"][i];
    EXPECT_EQ(row["cell"], want.cell);
    EXPECT_NEAR(row["compute_s"]["mean"].get<double>(), want.compute, 1e-12) << want.cell;
    EXPECT_NEAR(row["comm_overlapped_s"]["mean"].get<double>(), want.overlapped, 1e-12) << want.cell;
    EXPECT_NEAR(row["comm_wait_s"]["mean"].get<double>(), want.wait, 1e-12) << want.cell;
    if (want.algbw < 0) {
      EXPECT_TRUE(row["busbw_gbps"].is_null()) << want.cell;
    } else {
      EXPECT_NEAR(row["algbw_gbps"]["mean"].get<double>(), want.algbw, 1e-9) << want.cell;
      EXPECT_NEAR(row["busbw_gbps"]["mean"].get<double>(), want.busbw, 1e-9) << want.cell;
    }
  }
  // 4 processes lose the most: 0.41 / 0.85 of one process's step rate; of the 0.44 s lost, 0.2 s is
  // the wait and 0.24 s slower compute (0.65 s against 0.41 s: 59 % slower, with 1 thread against 2).
  EXPECT_EQ(
      table["explanation"],
      "Largest loss of efficiency: Gloo on 4 processes (1 server, 1 thread each), 48% of one process's "
      "step rate (0.85 s a step against 0.41 s). 0.2 s of each 0.85 s step waits on Gloo after backward "
      "(24%), and communication was in flight during 0.05 s of backward; the compute itself takes "
      "0.65 s, 59% slower than on one process, which computes with 2 threads against 1 thread here. The "
      "larger part of the 0.44 s lost a step is slower compute (0.24 s). Gloo moved 100 MB a step at "
      "0.6 GB/s bus bandwidth.");
  const std::string md = ReadFileBytes(dir + "/report.md");
  EXPECT_NE(md.find("## Where a step's time goes"), std::string::npos) << md;
  EXPECT_NE(md.find("![Where a step's time goes](breakdown.svg)"), std::string::npos) << md;
  EXPECT_NE(
      md.find(
          "| gloo | 1 | 4 | 1 | 4 | 0.85 ± 0 | 0.65 ± 0 | 0.05 ± 0 | 0.2 ± 0 | 23.5 % | 100 ± 0 | 0.4 ± 0 | "
          "0.6 ± 0 |"),
      std::string::npos)
      << md;
  EXPECT_TRUE(fs::exists(dir + "/breakdown.svg"));
  EXPECT_NE(
      ReadFileBytes(dir + "/breakdown.csv").find("backend-gloo_np-4" + tail + ",gloo,1,4,1,0.85,0.65,0.05,"),
      std::string::npos);
}

// `hvdrun-lab report RESULTS` where RESULTS holds experiments: each is reported; where it holds none,
// the error says what to give.
TEST(LabReport, ADirectoryOfExperimentsGetsEachReported) {
  ScratchDir scratch;
  const std::string results = scratch.path() + "/results";
  fs::create_directories(results);
  for (const char* name : {"one", "two"}) {
    fs::copy(std::string(HVDRUN_LAB_FIXTURES_DIR) + "/scaling", results + "/" + name,
             fs::copy_options::recursive);
  }
  fs::create_directories(results + "/not-an-experiment");
  ProcessResult result = RunLab({"report", results});
  ASSERT_EQ(result.exit_code, 0) << result;
  EXPECT_NE(result.stdout_text.find("hvdrun-lab: " + results +
                                    " holds 2 experiments: one, two; reporting each "
                                    "(one alone: hvdrun-lab report " +
                                    results + "/one)"),
            std::string::npos)
      << result;
  EXPECT_TRUE(fs::exists(results + "/one/report.md"));
  EXPECT_TRUE(fs::exists(results + "/two/report.md"));
  EXPECT_FALSE(fs::exists(results + "/report.md"));

  ProcessResult empty = RunLab({"report", results + "/not-an-experiment"});
  EXPECT_EQ(empty.exit_code, 3) << empty;
  EXPECT_EQ(empty.stderr_text,
            "hvdrun-lab: '" + results +
                "/not-an-experiment' holds no experiment: neither it nor a directory in it "
                "has an experiment.json; give the directory `hvdrun-lab run` named "
                "(RESULTS/<name>)\n");
}

// Pixels of exactly `color`, and the runs of columns they occupy (gaps of more than 40 columns
// between runs), left to right.
struct ColorSpread {
  int pixels = 0;
  std::vector<std::pair<int, int>> column_runs;
  int top = -1;  // the rows the colour occupies
  int bottom = -1;
};

ColorSpread FindColor(const PngImage& image, const Rgb& color) {
  ColorSpread spread;
  std::vector<bool> columns(static_cast<size_t>(image.width), false);
  for (int y = 0; y < image.height; ++y) {
    for (int x = 0; x < image.width; ++x) {
      if (image.At(x, y) == color) {
        ++spread.pixels;
        columns[static_cast<size_t>(x)] = true;
        if (spread.top < 0) spread.top = y;
        spread.bottom = y;
      }
    }
  }
  int last = -1000;
  for (int x = 0; x < image.width; ++x) {
    if (!columns[static_cast<size_t>(x)]) continue;
    if (x - last > 40) {
      spread.column_runs.emplace_back(x, x);
    } else {
      spread.column_runs.back().second = x;
    }
    last = x;
  }
  return spread;
}

// Chromium runs in a network namespace of its own, with nothing but a loopback device: whatever
// it would fetch, the test sends no traffic off this machine.
std::vector<std::string> ChromiumArgs(const ScratchDir& scratch) {
  return {"/usr/bin/unshare",
          "--net",
          "--",
          kChromium,
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-quic",
          "--no-first-run",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--hide-scrollbars",
          "--user-data-dir=" + scratch.path() + "/chromium-profile"};
}

TEST(LabReport, ChromiumRendersTheChartsOfReportHtml) {
  ASSERT_TRUE(fs::exists(kChromium)) << "Debian's chromium is not installed: run scripts/install-deps.sh";
  ScratchDir scratch;
  const std::string dir = ReportOnFixture(scratch);
  ASSERT_FALSE(dir.empty());
  const std::string url = "file://" + dir + "/report.html";

  // The DOM Chromium built: the three charts, inline.
  std::vector<std::string> dump = ChromiumArgs(scratch);
  dump.insert(dump.end(), {"--dump-dom", url});
  ProcessResult dom = e2e::RunProcess(dump, std::chrono::seconds(90));
  ASSERT_EQ(dom.exit_code, 0) << dom;
  for (const char* chart : {"chart-throughput_per_worker", "chart-total_throughput", "chart-speedup"}) {
    const size_t figure = dom.stdout_text.find(std::string("<figure id=\"") + chart + "\">");
    ASSERT_NE(figure, std::string::npos) << chart;
    const size_t end = dom.stdout_text.find("</figure>", figure);
    const std::string inside = dom.stdout_text.substr(figure, end - figure);
    EXPECT_NE(inside.find("<svg"), std::string::npos) << chart;
    EXPECT_NE(inside.find("<polyline"), std::string::npos) << chart;
  }

  // A screenshot wide enough for the three 640-pixel charts side by side.
  const std::string png = scratch.path() + "/report.png";
  std::vector<std::string> shot = ChromiumArgs(scratch);
  shot.insert(shot.end(), {"--window-size=2200,1600", "--screenshot=" + png, url});
  ProcessResult screenshot = e2e::RunProcess(shot, std::chrono::seconds(90));
  ASSERT_EQ(screenshot.exit_code, 0) << screenshot;
  std::string error;
  std::optional<PngImage> image = DecodePng(ReadFileBytes(png), &error);
  ASSERT_TRUE(image) << error;
  EXPECT_EQ(image->width, 2200);

  int white = 0;
  for (const Rgb& pixel : image->pixels) white += pixel == Rgb{255, 255, 255} ? 1 : 0;
  EXPECT_LT(white, static_cast<int>(image->pixels.size() * 97 / 100)) << "the page is (nearly) blank";

  // Each backend's colour in each of the three charts, side by side, left to right.
  ColorSpread gloo = FindColor(*image, ParseColor("#1f77b4"));
  ColorSpread mpi = FindColor(*image, ParseColor("#ff7f0e"));
  EXPECT_GT(gloo.pixels, 300);
  EXPECT_GT(mpi.pixels, 300);
  ASSERT_EQ(gloo.column_runs.size(), 3u) << gloo.pixels << " gloo pixels";
  ASSERT_EQ(mpi.column_runs.size(), 3u) << mpi.pixels << " mpi pixels";
  for (size_t chart = 0; chart < 3; ++chart) {
    // A chart is 640 pixels wide; its series lie within it.
    EXPECT_LT(gloo.column_runs[chart].second - gloo.column_runs[chart].first, 640) << chart;
    const int overlap = std::min(gloo.column_runs[chart].second, mpi.column_runs[chart].second) -
                        std::max(gloo.column_runs[chart].first, mpi.column_runs[chart].first);
    EXPECT_GT(overlap, 200) << "gloo and mpi drawn in the same chart " << chart;
  }
  // The grey ideal line: in the speedup chart (the third), not in the others (where text, drawn
  // with anti-aliasing, may give a few pixels of that grey).
  auto ideal_in = [&](const std::pair<int, int>& columns) {
    int count = 0;
    const Rgb grey = ParseColor("#7f7f7f");
    for (int y = gloo.top; y <= gloo.bottom; ++y) {
      for (int x = columns.first; x <= columns.second; ++x) count += image->At(x, y) == grey ? 1 : 0;
    }
    return count;
  };
  const int ideal_speedup = ideal_in(gloo.column_runs[2]);
  EXPECT_GT(ideal_speedup, 100);
  EXPECT_GT(ideal_speedup, 5 * ideal_in(gloo.column_runs[0])) << ideal_in(gloo.column_runs[0]);
}

}  // namespace
}  // namespace hvdrun::lab_test
