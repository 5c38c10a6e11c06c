"""The analysis that scripts/bench/autotune_replay.sh and scripts/bench/autotune_synthetic.sh share
(docs/benchmarks.md, "Autotuning against an exhaustive sweep"), from the files their runs left in OUT:

    autotune_analysis.py candidates OUT          the sweep's three best settings, less the default
                                                 (128 MiB, 1 ms), as words MB/MS on one line
    autotune_analysis.py report OUT TITLE ROUNDS the sweep's table, then each round, the medians over
                                                 the rounds and the ratios to the best fixed setting
                                                 and to the default, timed as the step and as the
                                                 loop's period; the step's figures also go to
                                                 OUT/summary.json
    autotune_analysis.py rows OUT LABEL          OUT/summary.json as scripts/gpu-check.sh's rows (JSON
                                                 lines: step, result, detail), LABEL naming the runs

OUT holds the sweep, as hvdrun-bench's --json files sweep-N.json (a setting's figure: the median over
the files of each one's step_ms) or as timelines sweep_MB_MS-N.trace.json (a setting's figure: the
median over the files of each one's median loop period, its first 3 steps left out); and for each
round R (1 to ROUNDS): timelines fixed_MB_MS-R.trace.json (fixed_128_1 is the default) and
autotune-R.trace.json, and the tuner's log autotune-R.csv.

A step is rank 0's responses of the step's tensors (as many as the distinct tensor names its
allreduces carry: every tensor once a step), from the first one's submission to the last one's end;
its loop period runs from the end of the step before instead (the compute and the barrier between
steps included: what the tuner scores). A fixed run's figure is the median over its steps after the
first 3; an autotune run's, the median over its steps after its AUTOTUNE_KEPT mark. It asserts
nothing about the times.
"""

import csv
import glob
import json
import os
import re
import statistics
import sys

DEFAULT = (128.0, 1.0)
SKIPPED_STEPS = 3


def allreduces(trace_path):
    """Rank 0's named allreduce responses as (start us, end us, tensors, names), sorted, and the
    AUTOTUNE_KEPT mark's ts (None when the timeline has none)."""
    with open(trace_path, encoding="utf-8") as source:
        trace = json.load(source)
    responses, kept = [], None
    for e in trace:
        if e.get("pid") != 0:
            continue
        if e.get("name") == "AUTOTUNE_KEPT":
            kept = e["ts"]
        elif e.get("name") == "ALLREDUCE" and e.get("ph") == "X" and "names" in e.get("args", {}):
            responses.append((e["ts"], e["ts"] + e["dur"], e["args"]["tensors"], e["args"]["names"]))
    responses.sort()
    return responses, kept


def steps_of(trace_path, period=False):
    """Rank 0's steps as (start us, duration ms), and the AUTOTUNE_KEPT mark's ts (or None). With
    period, a step's duration runs from the end of the step before (the loop's period) instead of
    from its first submission, and the first step has none."""
    responses, kept = allreduces(trace_path)
    tensors = len({name for _, _, _, names in responses for name in names})
    steps, count, start, end = [], 0, None, None
    for ts, te, n, _ in responses:
        start = ts if start is None else min(start, ts)
        end = te if end is None else max(end, te)
        count += n
        if count >= tensors:
            steps.append((start, end))
            count, start, end = 0, None, None
    if period:
        return [(steps[i - 1][1], (steps[i][1] - steps[i - 1][1]) / 1000) for i in range(1, len(steps))], kept
    return [(a, (b - a) / 1000) for a, b in steps], kept


def timed_median(trace_path, period):
    steps, _ = steps_of(trace_path, period)
    if len(steps) <= SKIPPED_STEPS:
        sys.exit(f"{trace_path}: {len(steps)} steps in rank 0's timeline, fewer than the {SKIPPED_STEPS + 1} needed")
    return statistics.median(d for _, d in steps[SKIPPED_STEPS:])


def sweep_of(out):
    """Each setting (MiB, ms) of the sweep with its median figure, and what the figure is."""
    figures = {}
    paths = sorted(glob.glob(os.path.join(out, "sweep-*.json")))
    if paths:
        what = "median step (ms) of hvdrun-bench's own timing"
        for path in paths:
            with open(path, encoding="utf-8") as source:
                for s in json.load(source)["settings"]:
                    figures.setdefault((s["fusion_threshold_mb"], s["cycle_time_ms"]), []).append(s["step_ms"])
    else:
        what = "median loop period (ms) of rank 0's steps, from its timeline"
        for path in sorted(glob.glob(os.path.join(out, "sweep_*.trace.json"))):
            match = re.fullmatch(r"sweep_([0-9.]+)_([0-9.]+)-[0-9]+\.trace\.json", os.path.basename(path))
            if not match:
                sys.exit(f"{path}: not a sweep timeline's name (sweep_MB_MS-N.trace.json)")
            figures.setdefault((float(match.group(1)), float(match.group(2))), []).append(timed_median(path, True))
    if not figures:
        sys.exit(f"{out}: no sweep (sweep-N.json or sweep_MB_MS-N.trace.json)")
    return {k: statistics.median(v) for k, v in figures.items()}, what


def candidates(out):
    sweep, _ = sweep_of(out)
    ranked = sorted(sweep, key=sweep.get)
    print(" ".join(f"{mb:g}/{ms:g}" for mb, ms in ranked[:3] if (mb, ms) != DEFAULT))


def print_sweep(sweep, what, title):
    best, worst = min(sweep, key=sweep.get), max(sweep, key=sweep.get)
    thresholds, cycles = sorted({k[0] for k in sweep}), sorted({k[1] for k in sweep})
    print(f"{title}: the sweep, {what}")
    print("| fusion MiB \\ cycle ms | " + " | ".join(f"{c:g}" for c in cycles) + " |")
    print("|---" * (len(cycles) + 1) + "|")
    for t in thresholds:
        cells = []
        for c in cycles:
            if (t, c) not in sweep:
                cells.append("")
                continue
            v = f"{sweep[(t, c)]:.1f}"
            cells.append(f"**{v}**" if (t, c) == best else (f"_{v}_" if (t, c) == worst else v))
        print(f"| {t:g} | " + " | ".join(cells) + " |")
    print(f"best {best[0]:g} MiB, {best[1]:g} ms: {sweep[best]:.1f} ms; worst {worst[0]:g} MiB, {worst[1]:g} ms: "
          f"{sweep[worst]:.1f} ms; default 128 MiB, 1 ms: {sweep.get(DEFAULT, float('nan')):.1f} ms")


def label(name):
    return name.replace("_", " MiB ") + " ms"


def rounds_table(out, rounds, period, what):
    fixed = sorted({os.path.basename(p)[len("fixed_"):].split("-")[0]
                    for p in glob.glob(os.path.join(out, "fixed_*.trace.json"))})
    if "128_1" not in fixed:
        sys.exit(f"{out}: no run of the default setting (fixed_128_1-R.trace.json)")
    per = {name: [] for name in fixed}
    per["autotune"] = []
    search_steps, kept_settings = [], []
    for r in range(1, rounds + 1):
        for name in fixed:
            per[name].append(timed_median(os.path.join(out, f"fixed_{name}-{r}.trace.json"), period))
        steps, kept = steps_of(os.path.join(out, f"autotune-{r}.trace.json"), period)
        if kept is None:
            sys.exit(f"round {r}: the autotune run has no AUTOTUNE_KEPT mark: the search did not end")
        after = [d for s, d in steps if s >= kept]
        if not after:
            sys.exit(f"round {r}: the autotune run has no step after its AUTOTUNE_KEPT mark: run it longer")
        search_steps.append(sum(1 for s, _ in steps if s < kept))
        per["autotune"].append(statistics.median(after))
        with open(os.path.join(out, f"autotune-{r}.csv"), encoding="utf-8") as source:
            chosen = list(csv.DictReader(source))[-1]
        mb, ms = float(chosen["tensor_fusion_threshold"]), float(chosen["cycle_time_ms"])
        cache = "on" if chosen["cache_enabled"] == "1" else "off"
        kept_settings.append(f"{mb:.3g} MiB, {ms:.3g} ms, cache {cache}")
        print(f"round {r}: " + ", ".join(f"{label(n)} {per[n][-1]:.1f}" for n in fixed) +
              f"; autotune {per['autotune'][-1]:.1f} ms over {len(after)} steps after {search_steps[-1]} searching, "
              f"kept {kept_settings[-1]}")
    medians = {name: statistics.median(v) for name, v in per.items()}
    best_name = min(fixed, key=medians.get)
    best = tuple(float(x) for x in best_name.split("_"))
    ratios_best = [a / b for a, b in zip(per["autotune"], per[best_name])]
    ratios_default = [a / b for a, b in zip(per["autotune"], per["128_1"])]
    print("medians over rounds: " + ", ".join(f"{label(n)} {medians[n]:.1f}" for n in fixed))
    print()
    b, d, a = medians[best_name], medians["128_1"], medians["autotune"]
    print(f"{what}: median over {rounds} rounds of each run's median (ms), from rank 0's timeline; the ratios as the "
          f"ratio of those medians, then the median of each round's ratio")
    print("| best fixed | default (128 MiB, 1 ms) | autotune, after the search | autotune / best | autotune / default |"
          " steps searching |")
    print("|---|---|---|---|---|---|")
    print(f"| {b:.1f} ({best[0]:g} MiB, {best[1]:g} ms) | {d:.1f} | {a:.1f} | **{a / b:.3f}**, "
          f"{statistics.median(ratios_best):.3f} | **{a / d:.3f}**, {statistics.median(ratios_default):.3f} | "
          f"{statistics.median(search_steps):g} |")
    print()
    same = sum(1 for k in kept_settings if k.startswith(f"{best[0]:.3g} MiB, {best[1]:.3g} ms,"))
    print(f"kept: {'; '.join(kept_settings)} ({same} of {rounds} rounds the best fixed setting)")
    return {"rounds": rounds, "best_ms": b, "best_setting": [best[0], best[1]], "default_ms": d, "autotune_ms": a,
            "autotune_over_best": a / b, "autotune_over_default": a / d,
            "steps_searching": statistics.median(search_steps), "kept": kept_settings, "kept_best": same}


def report(out, title, rounds):
    sweep, what = sweep_of(out)
    print_sweep(sweep, what, title)
    print()
    summary = rounds_table(out, rounds, False, "step, from its first submission to its last response's end")
    summary["sweep_best"], summary["sweep_worst"] = min(sweep, key=sweep.get), max(sweep, key=sweep.get)
    summary["sweep_best_ms"], summary["sweep_worst_ms"] = sweep[summary["sweep_best"]], sweep[summary["sweep_worst"]]
    write_atomically(os.path.join(out, "summary.json"), json.dumps(summary, indent=1) + "\n")
    print()
    rounds_table(out, rounds, True, "loop period, from the step before's end to this one's (compute and barrier "
                 "included: what the tuner scores)")


def write_atomically(path, text):
    with open(path + ".tmp", "w", encoding="utf-8") as target:
        target.write(text)
    os.replace(path + ".tmp", path)


def rows(out, title):
    """The report's step figures (OUT/summary.json) as two rows of scripts/gpu-check.sh's table: the
    sweep, and autotune against its best and the default, each with its goal."""
    with open(os.path.join(out, "summary.json"), encoding="utf-8") as source:
        s = json.load(source)
    (best_mb, best_ms), (worst_mb, worst_ms) = s["sweep_best"], s["sweep_worst"]
    print(json.dumps({"step": f"{title}: the sweep of fusion threshold x cycle time",
                      "result": f"{s['sweep_best_ms']:.2f} ms best",
                      "detail": f"best {best_mb:g} MiB, {best_ms:g} ms; worst {worst_mb:g} MiB, {worst_ms:g} ms: "
                                f"{s['sweep_worst_ms']:.2f} ms (median step of hvdrun-bench's timing)"}))
    met_best, met_default = s["autotune_over_best"] <= 1.05, s["autotune_over_default"] <= 1.02
    print(json.dumps({"step": f"{title}: --autotune against the best fixed setting",
                      "result": f"{s['autotune_over_best']:.3f}x best",
                      "detail": f"{s['autotune_ms']:.2f} ms a step after {s['steps_searching']:g} steps searching, "
                                f"best fixed ({s['best_setting'][0]:g} MiB, {s['best_setting'][1]:g} ms) "
                                f"{s['best_ms']:.2f} ms (goal <= 1.05x: {'met' if met_best else 'not met'}), "
                                f"default {s['default_ms']:.2f} ms: {s['autotune_over_default']:.3f}x (goal <= 1.02x: "
                                f"{'met' if met_default else 'not met'}); medians of {s['rounds']} rounds; kept "
                                f"{s['kept'][-1]} ({s['kept_best']} of {s['rounds']} rounds the best fixed setting)"}))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "candidates":
        candidates(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "report":
        report(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    elif len(sys.argv) == 4 and sys.argv[1] == "rows":
        rows(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
