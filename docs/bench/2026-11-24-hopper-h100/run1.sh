#!/usr/bin/env bash
# Device run 1: build, smoke, Hopper tests, first benchmarks.
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee $OUT/gpu.txt
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
echo "== smoke"
timeout 60 $S bench mha --pattern full --seq 1024 --batch 2 --heads 2 --dim 64 --block 128x128 --warps 12 --runs 20 --no-counters > $OUT/smoke.txt 2>&1; echo "smoke rc=$?"; grep -E "check|latency|error" $OUT/smoke.txt | head -5
echo "== tests"
timeout 300 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > $OUT/hopper_tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests ran|HGMMA" $OUT/hopper_tests.log | head -40
grep -B2 -A6 "Failure" $OUT/hopper_tests.log | head -60
echo "== bench"
b() { timeout 60 $S bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^(kernel|check|latency|throughput|floor)" | tr '\n' ' '; echo; }
for d in 64 128; do
  for cfg in "--block 64x64 --warps 4" "--block 128x128 --warps 12" "--block 128x64 --warps 12"; do
    echo "full L4096 B4 H12 d$d $cfg: $(b --pattern full --seq 4096 --batch 4 --heads 12 --dim $d $cfg)"
    echo "causal L4096 B4 H12 d$d $cfg: $(b --pattern causal --seq 4096 --batch 4 --heads 12 --dim $d $cfg)"
  done
done | tee $OUT/bench.txt
