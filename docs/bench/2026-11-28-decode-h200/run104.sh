#!/usr/bin/env bash
# Device run 104 (H200, 2026-11-28): the code since run 103 (attention_common, the MHA choice's
# split, the tile model's head-size slots) through the shape / Hopper / choice / prepared / split
# GPU suites and every Python GPU test; then where decode's time goes (issue 31): `stof bench
# mha` on three dense-cache decode steps with the source as is, with the chunk merge's loads
# removed (wrong output, timing only), with 32 chunks per tile, and with both (the sed lines
# below patch the device's copy only).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total,clocks.sm,clocks.mem --format=csv,noheader
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
T=/tmp/b/tests/gpu/stof_gpu_tests
cuobjdump -sass /tmp/b/kernels/libstof_kernels.a 2>/dev/null | grep -c HGMMA || cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA
timeout 200 $T --gtest_filter='*Shapes*:*Hopper*:MhaChoice*:*PreparedMha*:*Split*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
decode() {  # $1: label
  for shape in "8192 8" "32768 4" "32768 1"; do
    set -- "$1" $shape
    /tmp/b/app/stof bench mha --pattern causal --seq $2 --batch $3 --heads 32 --kv-heads 8 --head-dim 128 \
      --dtype bf16 --q-len 1 --no-counters --json > $OUT/tmp.json 2>&1
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
decode base
H=kernels/attention_hopper/hopper_split.cuh C=kernels/attention_common/hopper_chunk.h
rebuild() { cmake --build /tmp/b -j 16 --target stof > $OUT/rebuild.log 2>&1 || tail -20 $OUT/rebuild.log; }
sed -i 's/^  if (!rows_used) return true;$/  return true;  \/\/ EXPERIMENT: no merge loads/' $H; grep -c EXPERIMENT $H; rebuild; decode no_merge
sed -i 's/kMaxHopperChunks = 16;/kMaxHopperChunks = 32;/' $C; rebuild; decode no_merge_32
git checkout $H; rebuild; decode chunks_32
git checkout $C
echo "total $(( $(date +%s) - t0 )) s"
