#!/usr/bin/env bash
# The one prepared GPU run: a preflight, every test marked `gpu` (selected by
# marker over the whole suite), then the GPU benchmark (eyelike on CuPy,
# torch CUDA and JAX against each library's idiom). Results land in $OUT
# (default gpu-results/), seven flat files:
#   summary.txt     each step's exit status and time; the last lines say it all
#   env.txt         nvidia-smi before and after, the preflight's versions
#   gpu-tests.txt   pytest output (-ra, --durations=30);  gpu-tests.xml: junit
#   gpu-tests-live.txt  each test's start, outcome, time and failure, written
#                   as it happens: what ran even if the time limit kills pytest
#   gpu-bench.txt   the benchmark's progress (each case's rows as it ends),
#                   then its table;  gpu-bench.json: all its rows, rewritten
#                   after every case ("complete": false until the end)
#
# Exit status: 0 all passed; 2 a carried wheel failed to install; 3 the
# preflight found no usable GPU (nothing else ran); 4 tests failed; 5 the
# benchmark failed (or a peer failed its correctness check); 6 both. Cases
# the benchmark's time limit left out are listed in summary.txt, not failed.
#
# On the lent H200 (Python 3.12, no network), from a session that has one:
#   1. here, once:  bash scripts/gpu-wheels.sh     (fills the git-ignored .whl/)
#   2. the device tool's run, with exactly:
#        command:   bash scripts/gpu-check.sh
#        carry:     [".whl"]
#        timeout_s: 400
#      The script keeps itself under GPU_CHECK_BUDGET seconds (default 350;
#      each step's `timeout -k 10` may add 10 s), so a first try and a rerun
#      both fit in the session's 15 minutes of device time, machine starts
#      (about 30 s on 2026-12-04) included. The tests get at most 210 s
#      (the first run on an H200, 2026-12-04, with 280 s in all, had 150 s
#      and finished half of them), with hypothesis's "gpu-check" profile
#      (15 fixed examples a test); the benchmark what they leave, up
#      to 120 s, and stops starting cases BENCH_MARGIN s (default 12) before
#      its `timeout`, most important cases first.
#
# Anywhere else with a CUDA GPU: bash scripts/gpu-check.sh (CuPy, pytest,
# hypothesis, array-api-compat and dask installed, or the wheels in .whl/).
# Without a usable GPU it stops at the preflight with status 3: never green.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out=${OUT:-gpu-results}
mkdir -p "$out"
out=$(cd "$out" && pwd) # absolute: a test may change the working directory
budget=${GPU_CHECK_BUDGET:-350}
summary="$out/summary.txt"
: >"$summary"
say() { echo "gpu-check: $*" | tee -a "$summary"; }
left() { echo $((budget - SECONDS)); }
# A step's limit: at most its cap, and never past the budget minus what the
# steps after it are promised.
limit() {
  local cap=$1 reserve=$2 room
  room=$(($(left) - reserve))
  if [ "$room" -lt 10 ]; then room=10; fi # `timeout 0` would mean no limit
  if [ "$room" -lt "$cap" ]; then echo "$room"; else echo "$cap"; fi
}
py=${PYTHON:-python3}

say "start $(date -u +%FT%TZ), budget ${budget}s, $("$py" --version 2>&1)"

# 1. Carried wheels: install only what the machine lacks; stop if that fails.
if [ -d .whl ]; then
  if ! wanted=$("$py" scripts/gpu_preflight.py missing-wheels .whl); then
    say "FAILED: could not list the wheels in .whl/"
    exit 2
  fi
  if [ -n "$wanted" ]; then
    mapfile -t wheels <<<"$wanted"
    if ! timeout 60 "$py" -m pip install -q --no-index --no-deps --no-compile \
      --no-cache-dir --upgrade --target /tmp/eyelike-site "${wheels[@]}"; then
      say "FAILED: pip could not install ${wheels[*]}"
      exit 2
    fi
    export PYTHONPATH=/tmp/eyelike-site
    say "installed ${#wheels[@]} carried wheel(s): $(basename -a "${wheels[@]}" | tr '\n' ' ')"
  else
    say "carried wheels: every distribution is installed already"
  fi
fi
export PYTHONPATH="$PWD/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
# JAX takes 75% of the GPU at first use unless told not to; the CuPy tests
# and the other peers need that memory.
export XLA_PYTHON_CLIENT_PREALLOCATE=false

# 2. Preflight: a device, and a CuPy kernel compiled and run, or stop here.
{
  echo "== nvidia-smi before"
  nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.max.sm,temperature.gpu --format=csv 2>&1
  echo "== preflight"
} >"$out/env.txt"
timeout 90 "$py" scripts/gpu_preflight.py probe 2>&1 | tee -a "$out/env.txt"
status=${PIPESTATUS[0]}
if [ "$status" -ne 0 ]; then
  say "FAILED: preflight exit $status: no usable GPU, or what the GPU tests need is missing (see above). Nothing else ran."
  exit 3
fi
say "preflight ok at ${SECONDS}s"

# 3. Every `gpu` test. EYELIKE_REQUIRE_GPU=1: a failed device probe in
# conftest fails them instead of skipping them. A module that cannot even be
# collected must not stop the others from running (its error still fails).
t_limit=$(limit 210 75)
rm -f "$out/gpu-tests-live.txt" # it is appended to
timeout -k 10 "$t_limit" env EYELIKE_REQUIRE_GPU=1 \
  EYELIKE_LIVE_REPORT="$out/gpu-tests-live.txt" "$py" -m pytest \
  -p no:cacheprovider -m gpu -q --tb=short --durations=30 \
  --hypothesis-profile=gpu-check \
  --continue-on-collection-errors --junitxml="$out/gpu-tests.xml" 2>&1 |
  tee "$out/gpu-tests.txt"
tests=${PIPESTATUS[0]}
say "tests: exit $tests (limit ${t_limit}s; 124 = timed out) at ${SECONDS}s"

# 4. The benchmark, most important cases first. It starts no case once its
# --time-limit has passed (or would pass during the case), a margin under
# the `timeout`, which is the last resort only; it lists the cases left out,
# and rewrites its JSON after every case, so even a kill leaves every
# finished case on disk. The JSON is then read: rows with an error (a peer
# that failed its check) fail the step; cases not run are reported.
b_limit=$(limit 120 5)
b_time=$((b_limit - ${BENCH_MARGIN:-12}))
if [ "$b_time" -lt 0 ]; then b_time=0; fi
rm -f "$out/gpu-bench.json" "$out/gpu-bench.json.part" # none from an earlier run
timeout -k 10 "$b_limit" "$py" -m benchmarks --backend cupy \
  --time-limit "$b_time" --json "$out/gpu-bench.json" 2>&1 |
  tee "$out/gpu-bench.txt"
bench=${PIPESTATUS[0]}
if [ -f "$out/gpu-bench.json" ]; then
  if ! stats=$("$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
errors = sum(r["error"] is not None for r in d["rows"])
print(errors, len(d.get("cases_not_run", [])), "yes" if d.get("complete") else "no")
for name in d.get("cases_not_run", []):
    print(name)' "$out/gpu-bench.json"); then
    say "bench: gpu-bench.json is unreadable"
    stats="0 0 no"
    bench=1
  fi
  read -r errors skipped complete <<<"$(head -n 1 <<<"$stats")"
  if [ "$errors" != 0 ]; then
    say "bench: $errors row(s) with an error (a peer failed its check): see gpu-bench.txt"
    if [ "$bench" -eq 0 ]; then bench=1; fi
  fi
  if [ "$complete" != yes ]; then
    say "bench: gpu-bench.json is incomplete (the run ended early): it holds the cases that finished"
  fi
  if [ "$skipped" != 0 ]; then
    say "bench: $skipped case(s) not run: out of time (--time-limit ${b_time}s):"
    tail -n +2 <<<"$stats" | sed 's/^/    /' | tee -a "$summary"
  fi
elif [ "$bench" -eq 0 ]; then
  say "bench: no gpu-bench.json written"
  bench=1
fi
say "bench: exit $bench (limit ${b_limit}s, --time-limit ${b_time}s; 124 = timed out) at ${SECONDS}s"

{
  echo "== nvidia-smi after"
  nvidia-smi --query-gpu=memory.used,clocks.sm,temperature.gpu --format=csv 2>&1
} >>"$out/env.txt"
if [ "$tests" -ne 0 ] && [ "$bench" -ne 0 ]; then
  code=6
elif [ "$tests" -ne 0 ]; then
  code=4
elif [ "$bench" -ne 0 ]; then
  code=5
else
  code=0
fi
say "done in ${SECONDS}s: tests exit $tests, bench exit $bench -> exit $code"
echo "== summary (also in $summary)"
cat "$summary"
exit "$code"
