#!/usr/bin/env bash
# The one GPU check: everything of hvdrun that needs a GPU, measured in one run, printed as one table.
#
#   bash gpu-check.sh [--bundle DIR] [--out DIR] [--example SCRIPT [--example SCRIPT ...]]
#
# On a machine with an NVIDIA GPU, a CUDA PyTorch (python3 first on PATH, or $PYTHON) and hvdrun's
# relocatable bundle (packaging/bundle/; this script is in it, as share/hvdrun/scripts/gpu-check.sh,
# and finds the bundle above itself unless --bundle names it). In a few minutes on 16 cores it
#   1. runs the bundle's setup step (hvdrun-setup): hvdrun-trainer and hvdrun.torch built against
#      this machine's torch, and the machine's NCCL made the NCCL backend's;
#   2. runs the NCCL backend's unit tests (hvdrun-nccl-tests: passed / skipped / failed);
#   3. hvdrun-bench --nccl at one rank, 8 B to 256 MiB: the largest size's max error and busbw, beside
#      raw NCCL's (--baseline);
#   3b. the negotiated engine over NCCL: a named 4-byte allreduce and the ResNet-50 gradient replay
#      (fused in device memory) beside raw NCCL's, and the timeline's NCCL events;
#   3c. --autotune over NCCL at one rank against an exhaustive sweep of fusion threshold x cycle
#      time (bench/autotune_replay.sh, 3 rounds): the tuned step against the best fixed setting's
#      and the default's;
#   4. hvdrun-trainer alone on CUDA (ResNet-50, batch 64, 224 px, fp32, SGD) against the same step in
#      PyTorch eager (gpu/eager_train.py), then the trainer under hvdrun -np 1 --nccl and --gloo
#      against alone;
#   5. hvdrun.torch's collectives on CPU and CUDA tensors under --nccl and --gloo (gpu/torch_collectives.py);
#   6. Horovod's synthetic benchmark as written today (examples/pytorch_synthetic_benchmark/; ResNet-50,
#      batch 64, fp32, SyncBatchNorm, DistributedOptimizer) run alone, which is its training loop in
#      plain PyTorch (every hvd call a no-op at one rank), then under hvdrun -np 1 --nccl and --gloo;
#   7. each --example SCRIPT (a Horovod example, say) under hvdrun -np 1 --nccl python3 SCRIPT;
#   8. the shared-memory allreduce at 8 ranks against Gloo over loopback (64 MiB busbw, the ResNet-50
#      replay), and hvdrun-trainer on the CPU at 1, 2 and 8 processes of one thread: what a 2-core
#      build machine cannot run.
# and prints the table in docs/benchmarks.md's form, opened by a paragraph that says what the run was
# (date, GPUs and driver, cores, OS, torch and its NCCL, the bundle's version and commit:
# gpu/check_table.py), also written to OUT/gpu-check.md, with every step's log and JSON in OUT
# (default ./gpu-check-results). Each step may run GPU_CHECK_STEP_TIMEOUT seconds (300). Exit status:
# 0 when every row passed, 1 when one failed (a wrong result, a program that failed or ran past its
# time), 2 for bad arguments or a machine without what it needs.
# hvdrun.torch's own one-line refusals (of a Horovod feature it does not have) are reported as
# "refused", not as failures.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bundle=""
out="gpu-check-results"
examples=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bundle) bundle=${2:?--bundle needs a directory}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --example) examples+=("${2:?--example needs a script}"); shift 2 ;;
    *) echo "gpu-check: unknown argument '$1' (usage: gpu-check.sh [--bundle DIR] [--out DIR] [--example SCRIPT])" >&2; exit 2 ;;
  esac
done
if [ -z "$bundle" ]; then
  # In the bundle this script is share/hvdrun/scripts/gpu-check.sh.
  for candidate in "$here/.." "$here/../.." "$here/../../.."; do
    if [ -x "$candidate/bin/hvdrun" ]; then bundle=$candidate && break; fi
  done
fi
if [ ! -x "$bundle/bin/hvdrun" ]; then
  echo "gpu-check: no hvdrun bundle at '${bundle:-$here/..}' (bin/hvdrun missing); unpack hvdrun-<version>-linux-x86_64.tar.gz and give --bundle DIR" >&2
  exit 2
fi
bundle=$(cd "$bundle" && pwd)
python=${PYTHON:-python3}
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi -L failed); this check needs one" >&2
  exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
rows=$out/rows.jsonl
: >"$rows"
export PATH=$bundle/bin:$PATH
start=$SECONDS

# row STEP RESULT DETAIL: one line of the table (RESULT: ok, failed, refused, skipped, or a figure).
row() { "$python" -c 'import json,sys; print(json.dumps({"step": sys.argv[1], "result": sys.argv[2], "detail": sys.argv[3]}))' "$1" "$2" "$3" >>"$rows"; }
# run NAME COMMAND...: runs it with its output in OUT/NAME.log; its exit status. A step that runs
# past $GPU_CHECK_STEP_TIMEOUT seconds (default 300) is stopped, says so in its log and fails its row.
step_timeout=${GPU_CHECK_STEP_TIMEOUT:-300}
run() {
  local name=$1 status
  shift
  echo "gpu-check: [$((SECONDS - start)) s] $name: $*" >&2
  timeout --kill-after=10 "$step_timeout" "$@" >"$out/$name.log" 2>&1
  status=$?
  if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
    echo "gpu-check: $name ran past ${step_timeout} s and was stopped" >>"$out/$name.log"
  fi
  return "$status"
}
last_line() { grep -v '^\s*$' "$out/$1.log" | tail -n 1 | cut -c1-160; }
json_get() { "$python" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$1" "$2"; }

# --- the machine ---------------------------------------------------------------------------------
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -n 1)
torch_text=$("$python" -c 'import torch; print(torch.__version__, "CUDA", torch.version.cuda, "NCCL", ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else "no CUDA")' 2>&1 | tail -n 1)
row "machine" "$gpu" "$(nproc) cores; torch $torch_text"
# What the run was, for the heading of its table (scripts/gpu/check_table.py says each fact).
started=$(date -u '+%Y-%m-%d %H:%M UTC')
bundle_facts=$(. "$bundle/share/hvdrun/bundle.env" 2>/dev/null &&
  echo "${HVDRUN_BUNDLE_VERSION:-unknown version}${HVDRUN_BUNDLE_COMMIT:+, commit $HVDRUN_BUNDLE_COMMIT}")
facts() {
  "$python" - "$out/facts.json" "$started" "$bundle_facts" "$step_timeout" "$((SECONDS - start))" <<'PY'
import json, os, subprocess, sys
path, date, bundle, step_timeout, seconds = sys.argv[1:]
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip().splitlines()
name, driver = [part.strip() for part in smi[0].split(",", 1)]
os_name = "Linux"
if os.path.exists("/etc/os-release"):
    for line in open("/etc/os-release"):
        if line.startswith("PRETTY_NAME="):
            os_name = line.split("=", 1)[1].strip().strip('"')
try:
    import torch
    torch_version = torch.__version__
    nccl = ".".join(map(str, torch.cuda.nccl.version())) if torch.cuda.is_available() else ""
except Exception as error:  # the table still says what it can
    torch_version, nccl = "(not importable: %s)" % error, ""
json.dump({"date": date, "gpu": name, "driver": driver, "gpus": len(smi), "cores": os.cpu_count(),
           "os": os_name, "torch": torch_version, "nccl": nccl, "bundle": bundle,
           "step_timeout": int(step_timeout), "seconds": int(seconds)}, open(path, "w"))
PY
}

# --- 1. setup --------------------------------------------------------------------------------------
setup_start=$SECONDS
if run setup "$bundle/bin/hvdrun-setup" --cuda; then
  row "setup (hvdrun-trainer, hvdrun.torch)" ok "$((SECONDS - setup_start)) s: $(grep -m 1 'building hvdrun-trainer against' "$out/setup.log" | sed 's/^hvdrun-setup: building hvdrun-trainer //' | cut -c1-160)"
else
  row "setup (hvdrun-trainer, hvdrun.torch)" failed "$(last_line setup)"
fi
# hvdrun.torch, as the setup step built it for this Python.
export PYTHONPATH=$bundle/lib/python${PYTHONPATH:+:$PYTHONPATH}

# --- 2. NCCL unit tests --------------------------------------------------------------------------
tests=$bundle/libexec/hvdrun/hvdrun-nccl-tests
if [ -x "$tests" ]; then
  run nccl-tests "$tests" --gtest_brief=1
  status=$?
  counts=$("$python" - "$out/nccl-tests.log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
def count(word):
    m = re.search(r"\[\s*%s\s*\] (\d+) test" % word, text)
    return int(m.group(1)) if m else 0
print(count("PASSED"), count("SKIPPED"), count("FAILED"))
PY
)
  read -r passed skipped failed <<<"$counts"
  if [ "$status" -eq 0 ] && [ "$failed" -eq 0 ]; then result=ok; else result=failed; fi
  row "NCCL unit tests" "$result" "$passed passed, $skipped skipped, $failed failed$([ "$result" = failed ] && echo ": $(grep -m3 '^\[  FAILED  \]' "$out/nccl-tests.log" | tr '\n' ' ')")"
else
  row "NCCL unit tests" failed "$tests is not in the bundle (built without NCCL?)"
fi

# --- 3. hvdrun-bench over NCCL ----------------------------------------------------------------------
if run bench-nccl hvdrun -np 1 --nccl hvdrun-bench -b 8 -e 256M --baseline --json "$out/bench-nccl.json"; then
  # At one rank busbw is 0 by definition (2(n-1)/n of the algorithm's bandwidth): the times tell.
  row "hvdrun-bench --nccl, 1 rank, 256 MiB" ok "$(json_get "$out/bench-nccl.json" '"max error %g, %.1f us a call, raw NCCL %.1f us" % (d["summary"]["max_error"], d["summary"]["time_us"], d["summary"]["baseline_time_us"])')"
else
  row "hvdrun-bench --nccl, 1 rank, 256 MiB" failed "$(last_line bench-nccl)"
fi

# The negotiated engine over NCCL (one rank): a named 4-byte allreduce against raw NCCL's, the ResNet-50
# gradient replay fused in device memory against raw NCCL's whole-buffer call (goal: within it + the
# cycle time + 0.2 ms), and the timeline's NCCL events.
if run named-nccl hvdrun -np 1 --nccl hvdrun-bench -b 4 -e 4 --named --baseline --iters 200 --warmup 20 \
  --json "$out/named-nccl.json"; then
  row "named 4 B allreduce --nccl, 1 rank" ok "$(json_get "$out/named-nccl.json" '"%.1f us named, raw NCCL %.1f us" % (d["summary"]["time_us"], d["summary"]["baseline_time_us"])')"
else
  row "named 4 B allreduce --nccl, 1 rank" failed "$(last_line named-nccl)"
fi
if run replay-nccl hvdrun -np 1 --nccl hvdrun-bench --replay resnet50 --baseline --iters 20 --warmup 5 \
  --json "$out/replay-nccl.json"; then
  row "replay resnet50 --nccl, 1 rank, fused" "$(json_get "$out/replay-nccl.json" '"%.2f ms" % d["settings"][0]["step_ms"]')" \
    "$(json_get "$out/replay-nccl.json" '"raw NCCL whole %.2f ms; goal <= raw + cycle %.1f ms + 0.2 ms = %.2f ms: %s; %.0f responses a step" % (d["baseline"]["whole_ms"], d["settings"][0]["cycle_time_ms"], d["baseline"]["whole_ms"] + d["settings"][0]["cycle_time_ms"] + 0.2, "met" if d["settings"][0]["step_ms"] <= d["baseline"]["whole_ms"] + d["settings"][0]["cycle_time_ms"] + 0.2 else "not met", d["settings"][0]["responses_per_step"])')"
else
  row "replay resnet50 --nccl, 1 rank, fused" failed "$(last_line replay-nccl)"
fi
if run timeline-nccl hvdrun -np 1 --nccl --timeline-filename "$out/timeline-nccl.json" hvdrun-bench --replay resnet50 \
  --iters 3 --warmup 1 && events=$(grep -o '"NCCL_ALLREDUCE"' "$out/timeline-nccl.json" | wc -l) && [ "$events" -gt 0 ]; then
  row "timeline --nccl" ok "$events NCCL_ALLREDUCE slices (device times from CUDA events)"
else
  row "timeline --nccl" failed "$(last_line timeline-nccl)"
fi

# --- 3c. autotune over NCCL ---------------------------------------------------------------------------
# The replay's sweep of fusion threshold x cycle time, then 3 rounds of its best settings, the default
# and --autotune, each step timed alike from the timeline (bench/autotune_replay.sh; its analysis
# prints the two rows).
if run autotune-nccl bash "$here/bench/autotune_replay.sh" --backend nccl --ranks 1 --rounds 3 --sweeps 1 \
  --stage "$bundle" --keep "$out/autotune-nccl" &&
  "$python" "$here/bench/autotune_analysis.py" rows "$out/autotune-nccl" "ResNet-50 replay --nccl, 1 rank" >>"$rows"; then
  :
else
  row "ResNet-50 replay --nccl, 1 rank: --autotune against the best fixed setting" failed "$(last_line autotune-nccl)"
fi

# --- 4. the trainer on CUDA --------------------------------------------------------------------------
train_args=(--model resnet50 --synthetic --batch-size 64 --image-size 224 --device cuda --warmup-steps 5 --steps 30)
img_s() { json_get "$1" '"%.0f" % d["img_per_sec_total"]'; }
alone=""
if run eager "$python" "$here/gpu/eager_train.py" --model resnet50 --batch-size 64 --image-size 224 --device cuda \
  --warmup-steps 5 --steps 30 --json "$out/eager.json"; then
  eager=$(img_s "$out/eager.json")
  row "PyTorch eager, ResNet-50 b64 fp32" "$eager img/s" "$(json_get "$out/eager.json" '"%.1f ms a step" % (1000 * d["step_time_s"])')"
else
  eager=""
  row "PyTorch eager, ResNet-50 b64 fp32" failed "$(last_line eager)"
fi
if command -v hvdrun-trainer >/dev/null && run trainer-alone hvdrun-trainer "${train_args[@]}" --json "$out/trainer-alone.json"; then
  alone=$(img_s "$out/trainer-alone.json")
  row "hvdrun-trainer alone" "$alone img/s" "$(json_get "$out/trainer-alone.json" '"%.1f ms a step" % (1000 * d["step_time_s"])')$([ -n "$eager" ] && awk -v a="$alone" -v e="$eager" 'BEGIN { printf "; %.3fx PyTorch eager (goal >= 1)", a / e }')"
else
  row "hvdrun-trainer alone" failed "$(last_line trainer-alone 2>/dev/null || echo 'hvdrun-trainer not built')"
fi
for backend in nccl gloo; do
  name="hvdrun-trainer under hvdrun -np 1 --$backend"
  if run "trainer-$backend" hvdrun -np 1 "--$backend" hvdrun-trainer "${train_args[@]}" --json "$out/trainer-$backend.json"; then
    under=$(img_s "$out/trainer-$backend.json")
    row "$name" "$under img/s" "$(json_get "$out/trainer-$backend.json" '"%.1f ms a step" % (1000 * d["step_time_s"])')$([ -n "$alone" ] && awk -v u="$under" -v a="$alone" -v b="$backend" 'BEGIN { printf "; %.3fx alone%s", u / a, b == "nccl" ? " (goal: step <= 1.03x alone)" : "" }')"
  else
    row "$name" failed "$(last_line "trainer-$backend")"
  fi
done

# --- 5. hvdrun.torch ------------------------------------------------------------------------------------
for backend in nccl gloo; do
  if run "torch-$backend" hvdrun -np 1 "--$backend" "$python" "$here/gpu/torch_collectives.py" --json "$out/torch-$backend.json"; then
    "$python" - "$out/torch-$backend.json" "$backend" >>"$rows" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(json.dumps({"step": "hvdrun.torch --%s %s, %s" % (sys.argv[2], r["call"], r["device"]),
                      "result": r["result"], "detail": r["detail"]}))
PY
  else
    row "hvdrun.torch --$backend" failed "$(last_line "torch-$backend")"
  fi
done

# --- 6. Horovod's synthetic benchmark ----------------------------------------------------------------------
# In the bundle beside the other scripts; in a source tree, in examples/.
synthetic=$here/gpu/pytorch_synthetic_benchmark.py
[ -f "$synthetic" ] || synthetic=$here/../examples/pytorch_synthetic_benchmark/pytorch_synthetic_benchmark.py
synthetic_args=(--model resnet50 --batch-size 64 --num-warmup-batches 5 --num-batches-per-iter 10 --num-iters 3)
synthetic_img_s() { sed -n 's/^\(\[0\]<stdout>:\)\{0,1\}Img\/sec per GPU: \([0-9.]*\).*/\2/p' "$out/$1.log" | tail -n 1; }
plain=""
if run synthetic-alone "$python" "$synthetic" "${synthetic_args[@]}" && [ -n "$(synthetic_img_s synthetic-alone)" ]; then
  plain=$(synthetic_img_s synthetic-alone)
  row "synthetic benchmark alone (plain PyTorch loop)" "$plain img/s" "ResNet-50 b64 fp32"
else
  row "synthetic benchmark alone (plain PyTorch loop)" failed "$(last_line synthetic-alone)"
fi
for backend in nccl gloo; do
  name="synthetic benchmark under hvdrun -np 1 --$backend"
  if run "synthetic-$backend" hvdrun -np 1 "--$backend" "$python" "$synthetic" "${synthetic_args[@]}" &&
    [ -n "$(synthetic_img_s "synthetic-$backend")" ]; then
    under=$(synthetic_img_s "synthetic-$backend")
    row "$name" "$under img/s" "$([ -n "$plain" ] && awk -v u="$under" -v p="$plain" 'BEGIN { printf "%.3fx alone", u / p }')"
  else
    row "$name" failed "$(last_line "synthetic-$backend")"
  fi
done

# --- 7. examples ----------------------------------------------------------------------------------------------
for example in "${examples[@]}"; do
  name=example-$(basename "$example" .py)
  if run "$name" hvdrun -np 1 --nccl "$python" "$example"; then
    row "example $(basename "$example") (-np 1 --nccl)" ok "$(last_line "$name")"
  else
    row "example $(basename "$example") (-np 1 --nccl)" failed "$(last_line "$name")"
  fi
done

# --- 8. host memory at 8 ranks (16 cores) ---------------------------------------------------------------------
# The shared-memory allreduce at 8 ranks of this machine, 3 rounds, medians: a 64 MiB float32 sum through
# it beside Gloo's own ring over loopback in the same run (--baseline), the ResNet-50 replay with
# --shared-memory on and off, and hvdrun-trainer on the CPU (ResNet-50, 224 px, 8 images a process,
# one thread a process) at 1, 2 and 8 processes: the speedups of adding processes on cores of their own.
host_rounds=${GPU_CHECK_HOST_ROUNDS:-3}
host_ok=1
for round in $(seq "$host_rounds"); do
  run "host8-bench-$round" hvdrun -np 8 --gloo --shared-memory on hvdrun-bench -b 64M -e 64M --iters 10 \
    --warmup 3 --baseline --json "$out/host8-bench-$round.json" || host_ok=0
  for memory in on off; do
    run "host8-replay-$memory-$round" hvdrun -np 8 --gloo --shared-memory "$memory" hvdrun-bench --replay resnet50 \
      --iters 10 --warmup 3 --json "$out/host8-replay-$memory-$round.json" || host_ok=0
  done
done
if [ "$host_ok" -eq 1 ]; then
  "$python" - "$out" "$host_rounds" >>"$rows" <<'PY'
import json, statistics, sys
out, rounds = sys.argv[1], range(1, int(sys.argv[2]) + 1)
load = lambda name: json.load(open("%s/%s.json" % (out, name)))
bench = [load("host8-bench-%d" % r)["results"][-1] for r in rounds]
shm = statistics.median(b["busbw_gbps"] for b in bench)
gloo = statistics.median(b["baseline_busbw_gbps"] for b in bench)
on = [load("host8-replay-on-%d" % r) for r in rounds]
off = [load("host8-replay-off-%d" % r) for r in rounds]
paths = sorted({d["allreduce_path"] for d in on}) + sorted({d["allreduce_path"] for d in off})
step_on = statistics.median(d["settings"][0]["step_ms"] for d in on)
step_off = statistics.median(d["settings"][0]["step_ms"] for d in off)
print(json.dumps({"step": "8 ranks --gloo: shared memory against Gloo's loopback ring", "result": "%.2fx" % (shm / gloo),
                  "detail": "64 MiB float32 sum, medians of %d runs: %.2f GB/s busbw against Gloo raw %.2f GB/s "
                            "(goal >= 3x)" % (len(bench), shm, gloo)}))
print(json.dumps({"step": "8 ranks --gloo: ResNet-50 replay, shared memory on / off", "result": "%.2fx" % (step_on / step_off),
                  "detail": "median step %.1f ms (path %s) against %.1f ms (path %s), goal <= 0.6x"
                            % (step_on, paths[0], step_off, paths[-1])}))
PY
else
  row "8 ranks --gloo, shared memory" failed "$(last_line "host8-bench-1")"
fi
cpu_train=(hvdrun-trainer --model resnet50 --synthetic --device cpu --batch-size 8 --image-size 224 --threads 1
  --warmup-steps 2 --steps 5)
cpu_step_1=""
for processes in 1 2 8; do
  what="hvdrun-trainer on the CPU, $processes process$([ "$processes" -gt 1 ] && echo es), one thread each"
  if run "trainer-cpu-$processes" hvdrun -np "$processes" --gloo "${cpu_train[@]}" --json "$out/trainer-cpu-$processes.json"; then
    step=$(json_get "$out/trainer-cpu-$processes.json" '"%.3f" % d["step_time_s"]')
    [ "$processes" -eq 1 ] && cpu_step_1=$step
    row "$what" "$step s a step" \
      "$(json_get "$out/trainer-cpu-$processes.json" '"%.1f img/s in all" % d["img_per_sec_total"]')$([ -n "$cpu_step_1" ] &&
        awk -v n="$processes" -v s="$step" -v one="$cpu_step_1" 'BEGIN { printf "; speedup %.2fx of %d", n * one / s, n }')"
  else
    row "$what" failed "$(last_line "trainer-cpu-$processes")"
  fi
done

# --- the table ----------------------------------------------------------------------------------------------
# docs/benchmarks.md's form: the paragraph that says what the run was, then the table.
facts
"$python" "$here/gpu/check_table.py" "$rows" "$out/facts.json" "$out/gpu-check.md"
