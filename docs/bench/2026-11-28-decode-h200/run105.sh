#!/usr/bin/env bash
# Device run 105 (H200, 2026-11-28): the chunk merge by four warps (a decode tile's rows in one
# warp; hopper_split.cuh) and up to 32 chunks for such tiles (issue 31). The shape / Hopper /
# choice / prepared / split GPU suites (DecodeSplitAndPackingMatchReference now also at 8 rows
# per head: the serial merge), memcheck on that test, then `stof bench mha` on three dense-cache
# decode steps with this code and, rebuilt, with the code before it (git stash on the device's
# copy).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
T=/tmp/b/tests/gpu/stof_gpu_tests
timeout 220 $T --gtest_filter='*Shapes*:*Hopper*:MhaChoice*:*PreparedMha*:*Split*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
timeout 120 compute-sanitizer --tool memcheck $T --gtest_filter='GpuHopperShapes.DecodeSplitAndPackingMatchReference' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" $OUT/memcheck.log
echo "at $(( $(date +%s) - t0 )) s"
decode() {  # $1: label
  for shape in "8192 8" "32768 4" "32768 1"; do
    set -- "$1" $shape
    /tmp/b/app/stof bench mha --pattern causal --seq $2 --batch $3 --heads 32 --kv-heads 8 --head-dim 128 \
      --dtype bf16 --q-len 1 --no-counters --json > $OUT/tmp.json 2>$OUT/err.txt
    python3 - "$1" "$2" "$3" $OUT/tmp.json <<'PY'
import json, sys
label, lk, b, path = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print(label, lk, b, "unreadable", open(path).read()[-300:]); sys.exit()
flat = {}
def walk(x, pre=""):
    if isinstance(x, dict):
        for k, v in x.items(): walk(v, pre + k + ".")
    else: flat[pre[:-1]] = x
walk(d)
keys = [k for k in flat if k.startswith("choice.") or k.startswith("check.")]
med, floor = flat.get("latency.median_us"), flat.get("floor.floor_us")
print(label, "L_k", lk, "B", b, "median_us", med, "floor_us", floor, "x_floor", med / floor if med and floor else None, {k: flat[k] for k in keys})
PY
  done
}
decode merge_by_warps
git stash -q && cmake --build /tmp/b -j 16 --target stof > $OUT/rebuild.log 2>&1 || tail -20 $OUT/rebuild.log
decode before
git stash pop -q
echo "total $(( $(date +%s) - t0 )) s"
