#!/usr/bin/env python3
"""Seeds of the report fuzzer (tests/fuzz/report_fuzzer.cc): each results directory under SOURCE
(one holding experiment.json) as one JSON document {"experiment": ..., "runs": [[reports], ...]},
run k being the run of cell k mod C, repeat k div C + 1, with its ranks' reports in rank order.
usage: report_seeds.py SOURCE OUTPUT_DIR
"""
import json
import os
import re
import sys


def rank_reports(run_dir):
    ranks_dir = os.path.join(run_dir, "hvdrun", "ranks")
    if not os.path.isdir(ranks_dir):
        return []
    files = [f for f in os.listdir(ranks_dir) if re.fullmatch(r"rank-\d+\.json", f)]
    files.sort(key=lambda f: int(f[5:-5]))
    reports = []
    for name in files:
        with open(os.path.join(ranks_dir, name), encoding="utf-8") as report:
            reports.append(json.load(report))
    return reports


def bundle(results_dir):
    with open(os.path.join(results_dir, "experiment.json"), encoding="utf-8") as experiment_file:
        experiment = json.load(experiment_file)
    runs = []
    for repeat in range(1, experiment.get("repeats", 1) + 1):
        for cell in experiment["cells"]:
            runs.append(rank_reports(os.path.join(results_dir, "cells", cell["id"], "repeat-%d" % repeat)))
    return {"experiment": experiment, "runs": runs}


def main(argv):
    source, output = argv[1], argv[2]
    os.makedirs(output, exist_ok=True)
    for directory, _, files in sorted(os.walk(source)):
        if "experiment.json" in files:
            name = os.path.basename(directory) + ".json"
            with open(os.path.join(output, name), "w", encoding="utf-8") as seed:
                json.dump(bundle(directory), seed, separators=(",", ":"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
