#include "lab/report/report_writer.h"

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <sstream>

#include "tests/e2e/scratch_dir.h"

namespace hvdrun::lab {
namespace {

void AddRun(StoredCell& cell, int repeat, const std::vector<double>& steps,
            const std::vector<double>& rates) {
  StoredRun run;
  run.repeat = repeat;
  run.record.ok = true;
  run.record.duration_s = 2;
  for (size_t rank = 0; rank < steps.size(); ++rank) {
    RankReport report;
    report.rank = static_cast<int>(rank);
    report.figures = {{"step_time_s", steps[rank]}, {"img_per_sec", rates[rank]}};
    run.ranks.push_back(report);
  }
  cell.runs.push_back(run);
}

StoredCell NewCell(const std::string& backend, int np, const std::string& model) {
  StoredCell stored;
  stored.cell.id = backend + "-" + std::to_string(np) + "-" + model;
  stored.cell.backend = backend;
  stored.cell.num_proc = np;
  stored.cell.procs_per_server = np;
  stored.cell.values = {{"backend", backend}, {"np", std::to_string(np)}, {"servers", "1"}, {"model", model}};
  return stored;
}

ExperimentResults Fixture() {
  ExperimentResults results;
  results.dir = "results/demo";
  results.name = "demo";
  results.description = "Two models | two backends";
  results.repeats = 1;
  results.axes = {
      {"backend", {"gloo", "nccl"}}, {"np", {"1", "2"}}, {"servers", {"1"}}, {"model", {"a", "b"}}};
  for (const char* model : {"a", "b"}) {
    StoredCell one = NewCell("gloo", 1, model);
    AddRun(one, 1, {0.5}, {64});
    results.cells.push_back(one);
    StoredCell two = NewCell("gloo", 2, model);
    AddRun(two, 1, {0.5, 0.7}, {60, 40});
    results.cells.push_back(two);
  }
  StoredCell skipped = NewCell("nccl", 2, "a");
  skipped.cell.skip_reason = "'nccl' needs one GPU per process";
  results.cells.push_back(skipped);
  StoredCell failed = NewCell("gloo", 1, "c");
  StoredRun run;
  run.repeat = 1;
  run.record.error = "hvdrun ended with exit code 3";
  failed.runs.push_back(run);
  results.cells.push_back(failed);
  return results;
}

ReportTables Tables(const ExperimentResults& results) {
  return BuildReportTables(results, [] {
    HostFacts facts;
    facts.host = "here";
    facts.facts["os"] = {"Debian 12", "/etc/os-release"};
    return facts;
  });
}

TEST(ReportWriter, MarkdownHasTheLabsTablesAndLinksTheCharts) {
  ExperimentResults results = Fixture();
  ReportTables tables = Tables(results);
  std::string md = RenderMarkdown(results, tables);
  EXPECT_EQ(md.rfind("# demo\n\nTwo models | two backends\n\n", 0), 0u) << md;
  EXPECT_NE(
      md.find("6 cells (1 skipped on this machine, 0 combinations excluded), 1 run per cell: 4 ok, 1 failed, "
              "0 not run yet."),
      std::string::npos)
      << md;
  EXPECT_NE(
      md.find(
          "| backend | model | servers | processes per server | step time (s) | step time, ranks (s) | "
          "throughput per worker (images/s) | per worker, ranks | total throughput (images/s) | speedup | "
          "efficiency | runs ok |"),
      std::string::npos)
      << md;
  // gloo, 2 workers of model a: steps 0.5 and 0.7 (mean 0.6), 60 and 40 images/s (50 each, 100 in all),
  // speedup 100 / 64 = 1.5625, efficiency 78.1 %.
  EXPECT_NE(md.find("| gloo | a | 1 | 2 | 0.6 | 0.5–0.7 | 50 | 40–60 | 100 | 1.56 | 78.1 % | 1/1 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("![Throughput per worker (model=a)](throughput_per_worker-model-a.svg)"),
            std::string::npos);
  EXPECT_NE(md.find("![Speedup (model=b)](speedup-model-b.svg)"), std::string::npos);
  EXPECT_NE(md.find("## Environment"), std::string::npos);
  EXPECT_NE(md.find("| OS | Debian 12 | /etc/os-release, read now |"), std::string::npos);
  EXPECT_NE(md.find("## Skipped cells"), std::string::npos);
  EXPECT_NE(
      md.find(
          "| backend=nccl np=2 servers=1 model=a | all | skipped |  | 'nccl' needs one GPU per process |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("## Failed runs"), std::string::npos);
  // Sections without data are left out.
  EXPECT_EQ(md.find("## Allreduce by message size"), std::string::npos);
  EXPECT_EQ(md.find("## Tensor fusion"), std::string::npos);
  EXPECT_EQ(md.find("## Gradient compression"), std::string::npos);
  EXPECT_EQ(md.find("## Runs not made yet"), std::string::npos);
}

TEST(ReportWriter, HtmlIsSelfContained) {
  ExperimentResults results = Fixture();
  ReportTables tables = Tables(results);
  std::string html = RenderHtml(results, tables);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("url("), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  size_t svgs = 0;
  for (size_t at = html.find("<svg "); at != std::string::npos; at = html.find("<svg ", at + 1)) ++svgs;
  EXPECT_EQ(svgs, 6u);  // three charts for each model
  EXPECT_NE(html.find("<figure id=\"chart-speedup-model-a\">"), std::string::npos);
  EXPECT_NE(html.find("Two models | two backends"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"speedup-table\">"), std::string::npos);
  EXPECT_NE(html.find("<table id=\"environment-table\">"), std::string::npos);
}

TEST(ReportWriter, CsvAndJsonCarryEveryTable) {
  ExperimentResults results = Fixture();
  ReportTables tables = Tables(results);
  std::map<std::string, std::string> csv = RenderCsvFiles(results, tables);
  ASSERT_EQ(csv.count("speedup.csv"), 1u);
  ASSERT_EQ(csv.count("environment.csv"), 1u);
  ASSERT_EQ(csv.count("runs.csv"), 1u);
  std::istringstream speedup(csv["speedup.csv"]);
  std::string header;
  std::getline(speedup, header);
  EXPECT_EQ(header.rfind("cell,backend,model,servers,processes_per_server,workers,runs_ok,runs_failed,"
                         "step_time_s_mean,",
                         0),
            0u)
      << header;
  EXPECT_NE(
      csv["speedup.csv"].find("gloo-2-a,gloo,a,1,2,2,1,0,0.6,0,0.5,0.7,50,0,40,60,100,0,,1.5625,0.78125,"
                              "throughput,gloo-1-a,,,,0\n"),
      std::string::npos)
      << csv["speedup.csv"];
  EXPECT_NE(csv["runs.csv"].find("gloo-1-c,1,failed,0,hvdrun ended with exit code 3,\n"), std::string::npos);
  EXPECT_NE(csv["runs.csv"].find("nccl-2-a,0,skipped,0,'nccl' needs one GPU per process,\n"),
            std::string::npos);

  nlohmann::json json = RenderJson(results, tables);
  ASSERT_EQ(json["speedup"].size(), 4u);
  EXPECT_EQ(json["speedup"][1]["cell"], "gloo-2-a");
  EXPECT_DOUBLE_EQ(json["speedup"][1]["total_throughput"]["mean"].get<double>(), 100);
  EXPECT_DOUBLE_EQ(json["speedup"][1]["speedup"].get<double>(), 1.5625);
  EXPECT_EQ(json["speedup"][1]["axes"]["model"], "a");
  EXPECT_EQ(json["charts"].size(), 6u);
  EXPECT_EQ(json["runs"].size(), 6u);
}

// The path the ranks' reports name beside the backend, in every format; a cell whose reports do not
// say shows what the other figures show when missing ("—", an empty CSV field, null).
TEST(ReportWriter, AllreducePathInEveryFormat) {
  ExperimentResults results = Fixture();
  for (StoredCell& stored : results.cells) {
    for (StoredRun& run : stored.runs) {
      for (RankReport& rank : run.ranks) {
        if (stored.cell.id == "gloo-1-a") rank.allreduce_path = "gloo";
        if (stored.cell.id == "gloo-2-a") rank.allreduce_path = rank.rank == 0 ? "shm" : "gloo";
        if (stored.cell.id == "gloo-2-b") rank.allreduce_path = "shm";
      }
    }
  }
  ReportTables tables = Tables(results);
  const std::string md = RenderMarkdown(results, tables);
  EXPECT_NE(md.find("| backend | allreduce path | model | servers | processes per server | step time (s) |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| --- | --- | --- | ---: |"), std::string::npos) << md;
  EXPECT_NE(
      md.find("| gloo | shm, gloo | a | 1 | 2 | 0.6 | 0.5–0.7 | 50 | 40–60 | 100 | 1.56 | 78.1 % | 1/1 |"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| gloo | — | b | 1 | 1 | 0.5 |"), std::string::npos) << md;
  EXPECT_NE(md.find("| gloo | shm | b | 1 | 2 | 0.6 |"), std::string::npos) << md;

  const std::string html = RenderHtml(results, tables);
  EXPECT_NE(html.find("<th class=\"text\">backend</th><th class=\"text\">allreduce path</th><th "
                      "class=\"text\">model</th><th>servers</th>"),
            std::string::npos)
      << html;
  EXPECT_NE(
      html.find("<td class=\"text\">gloo</td><td class=\"text\">shm, gloo</td><td class=\"text\">a</td>"),
      std::string::npos)
      << html;

  std::map<std::string, std::string> csv = RenderCsvFiles(results, tables);
  std::istringstream speedup(csv["speedup.csv"]);
  std::string header;
  std::getline(speedup, header);
  EXPECT_TRUE(header.ends_with(",threads_per_process,cpus,allreduce_path,reformations")) << header;
  EXPECT_NE(csv["speedup.csv"].find(",throughput,gloo-1-a,,,\"shm, gloo\",0\n"), std::string::npos)
      << csv["speedup.csv"];
  EXPECT_NE(csv["speedup.csv"].find("gloo-1-b,gloo,b,1,1,1,1,0,"), std::string::npos) << csv["speedup.csv"];
  EXPECT_NE(csv["speedup.csv"].find(",throughput,gloo-1-b,,,,0\n"), std::string::npos) << csv["speedup.csv"];

  nlohmann::json json = RenderJson(results, tables);
  ASSERT_EQ(json["speedup"].size(), 4u);
  EXPECT_EQ(json["speedup"][0]["allreduce_path"], "gloo");
  EXPECT_EQ(json["speedup"][1]["allreduce_path"], "shm, gloo");
  EXPECT_TRUE(json["speedup"][2]["allreduce_path"].is_null()) << json["speedup"][2].dump();
  EXPECT_EQ(json["speedup"][3]["allreduce_path"], "shm");
}

// Runs of elastic jobs that re-formed (hvdrun's summary.json records their rounds): the speedup table
// counts the re-formations of each cell's ok runs, in a column that appears only then; the runs
// lists give each run's, empty (null) where hvdrun recorded no rounds.
TEST(ReportWriter, ReformationsOfElasticRuns) {
  ExperimentResults results = Fixture();
  for (StoredCell& stored : results.cells) {
    for (StoredRun& run : stored.runs) {
      if (stored.cell.id == "gloo-2-a") run.rounds = 3;
      if (stored.cell.id == "gloo-2-b") run.rounds = 1;
    }
  }
  ReportTables tables = Tables(results);
  const std::string md = RenderMarkdown(results, tables);
  EXPECT_NE(md.find("| efficiency | runs ok | re-formations |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| gloo | a | 1 | 2 | 0.6 | 0.5–0.7 | 50 | 40–60 | 100 | 1.56 | 78.1 % | 1/1 | 2 |"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| gloo | b | 1 | 2 | 0.6 | 0.5–0.7 | 50 | 40–60 | 100 | 1.56 | 78.1 % | 1/1 | 0 |"),
            std::string::npos)
      << md;

  std::map<std::string, std::string> csv = RenderCsvFiles(results, tables);
  EXPECT_NE(csv["speedup.csv"].find(",throughput,gloo-1-a,,,,2\n"), std::string::npos) << csv["speedup.csv"];
  EXPECT_NE(csv["runs.csv"].find("gloo-2-a,1,ok,2,,2\n"), std::string::npos) << csv["runs.csv"];
  EXPECT_NE(csv["runs.csv"].find("gloo-2-b,1,ok,2,,0\n"), std::string::npos) << csv["runs.csv"];
  EXPECT_NE(csv["runs.csv"].find("gloo-1-a,1,ok,2,,\n"), std::string::npos) << csv["runs.csv"];

  const nlohmann::json json = RenderJson(results, tables);
  EXPECT_EQ(json["speedup"][1]["reformations"], 2);
  EXPECT_EQ(json["speedup"][0]["reformations"], 0);
  for (const nlohmann::json& run : json["runs"]) {
    if (run["cell"] == "gloo-2-a") {
      EXPECT_EQ(run["reformations"], 2);
    } else if (run["cell"] == "gloo-1-a") {
      EXPECT_TRUE(run["reformations"].is_null());
    }
  }
}

TEST(ReportWriter, SectionsAppearWhenTheirDataExists) {
  ExperimentResults results = Fixture();
  results.axes.push_back({"compression", {"none", "fp16"}});
  for (StoredCell& stored : results.cells) {
    stored.cell.values.emplace_back("compression", stored.cell.id == "gloo-2-b" ? "fp16" : "none");
    for (StoredRun& run : stored.runs) {
      for (RankReport& rank : run.ranks) {
        rank.figures["test_accuracy"] = 0.9;
        AllreduceSize size;
        size.bytes = 1024;
        size.time_us = 10;
        size.busbw_gbps = 0.1;
        rank.sizes = {size};
      }
    }
  }
  ReportTables tables = Tables(results);
  std::string md = RenderMarkdown(results, tables);
  EXPECT_NE(md.find("## Allreduce by message size"), std::string::npos);
  EXPECT_NE(md.find("## Gradient compression"), std::string::npos);
  EXPECT_NE(md.find("| test accuracy |"), std::string::npos);
  std::map<std::string, std::string> csv = RenderCsvFiles(results, tables);
  EXPECT_EQ(csv.count("sizes.csv"), 1u);
  EXPECT_EQ(csv.count("compression.csv"), 1u);
}

TEST(ReportWriter, WritesEveryFile) {
  ExperimentResults results = Fixture();
  ReportTables tables = Tables(results);
  e2e::ScratchDir scratch;
  StatusOr<std::vector<std::string>> written = WriteReport(results, tables, scratch.path() + "/out");
  ASSERT_TRUE(written.ok()) << written.status().message();
  for (const char* name : {"report.md", "report.html", "report.json", "speedup.csv", "environment.csv",
                           "runs.csv", "speedup-model-a.svg", "total_throughput-model-b.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(scratch.path() + "/out/" + name)) << name;
  }
  EXPECT_EQ(written->size(), 12u);
}

// Whether `text` holds "inf" or "nan" (any case) as a word of its own: how a non-finite number prints.
bool HasNonFiniteNumber(const std::string& text) {
  std::string lower;
  for (char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const std::string word : {"inf", "nan"}) {
    for (size_t at = lower.find(word); at != std::string::npos; at = lower.find(word, at + 1)) {
      const bool letter_before = at > 0 && std::isalpha(static_cast<unsigned char>(lower[at - 1])) != 0;
      const size_t after = at + word.size();
      const bool letter_after =
          after < lower.size() && std::isalpha(static_cast<unsigned char>(lower[after])) != 0;
      if (!letter_before && !letter_after) return true;
    }
  }
  return false;
}

// Figures in range whose ratios are not (a step time of 1e-300 s against one of 1e15 s, a zero step
// time, a zero step-time scale's effect): every file of the report is written without an infinite or
// not-a-number value, the figures it cannot give shown as "—".
TEST(ReportWriter, NeverPrintsANonFiniteNumber) {
  ExperimentResults results;
  results.dir = "results/extreme";
  results.name = "extreme";
  results.repeats = 1;
  results.axes = {{"backend", {"gloo"}}, {"np", {"1", "2", "4"}}, {"servers", {"1"}}, {"model", {"a"}}};
  StoredCell one = NewCell("gloo", 1, "a");
  AddRun(one, 1, {1e15}, {1e-300});
  StoredCell two = NewCell("gloo", 2, "a");
  AddRun(two, 1, {1e-300, 1e-300}, {1e15, 1e15});
  StoredCell four = NewCell("gloo", 4, "a");
  AddRun(four, 1, {0, 0, 0, 0}, {0, 0, 0, 0});
  results.cells = {one, two, four};
  const ReportTables tables = Tables(results);
  ASSERT_EQ(tables.speedup.size(), 3u);
  EXPECT_FALSE(tables.speedup[1].speedup) << *tables.speedup[1].speedup;
  for (const auto& [name, contents] : RenderReportFiles(results, tables)) {
    EXPECT_FALSE(HasNonFiniteNumber(contents)) << name << ":\n" << contents;
  }
  EXPECT_FALSE(HasNonFiniteNumber("information, nancy")) << "the check itself";
  EXPECT_TRUE(HasNonFiniteNumber("cy=\"-inf\"") && HasNonFiniteNumber("(NaN%)")) << "the check itself";
}

}  // namespace
}  // namespace hvdrun::lab
