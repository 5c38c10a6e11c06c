#!/usr/bin/env python3
"""Where a test run's time went: scripts/quickstart.sh test prints this after ctest, so that a CI
log's tail says it.

  ctest_times.py BUILD_DIR JUNIT_XML

JUNIT_XML is ctest --output-junit's file; the tests' labels come from ctest --show-only=json-v1.
Prints each group's test time (clang-tidy, the package tests, the Release build's check, the rest),
the ten slowest tests, and last the count of tests passed, failed and skipped. Tests run side by side (ctest -j), so the sums add up to more than the
run's wall time; the longest single test bounds it from below.
"""
import json
import subprocess
import sys
import xml.etree.ElementTree as ElementTree


def group_of(name, labels):
    if name == "clang_tidy":
        return "clang-tidy"
    if "package" in labels:
        return "packages (label package)"
    if name == "release_build_quiet":
        return "release build (release_build_quiet)"
    return "the rest"


def main(build_dir, junit):
    shown = subprocess.run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"], check=True,
                           capture_output=True, text=True).stdout
    labels = {}
    for test in json.loads(shown).get("tests", []):
        for prop in test.get("properties", []):
            if prop.get("name") == "LABELS":
                labels[test["name"]] = prop.get("value", [])
    times = []
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for case in ElementTree.parse(junit).getroot().iter("testcase"):
        times.append((case.get("name"), float(case.get("time") or 0), case.get("status") or ""))
        if case.find("failure") is not None:
            counts["failed"] += 1
        elif case.find("skipped") is not None or case.get("status") in ("notrun", "disabled"):
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    groups = {}
    for name, seconds, _ in times:
        group = groups.setdefault(group_of(name, labels.get(name, [])), [0, 0.0])
        group[0] += 1
        group[1] += seconds
    print(f"ctest: {len(times)} tests; test time by group (tests run side by side, so these add up "
          "to more than the run's wall time):")
    for group, (count, seconds) in sorted(groups.items(), key=lambda g: -g[1][1]):
        print(f"  {seconds:7.0f} s  {group} ({count} test{'s' if count != 1 else ''})")
    print("ctest: the slowest tests:")
    for name, seconds, status in sorted(times, key=lambda t: -t[1])[:10]:
        print(f"  {seconds:7.1f} s  {name}{'' if status in ('run', '') else ' (' + status + ')'}")
    # ctest's own closing count is above these lines; the log's last line says it again.
    print(f"ctest: {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: ctest_times.py BUILD_DIR JUNIT_XML")
    main(sys.argv[1], sys.argv[2])
