#!/usr/bin/env bash
# Device run 65 (session 9): split on by default, scratch reserved at prepare, bench bf16
# tolerance. (1) Hopper + choice + prepared GPU tests, (2) bench bf16 check, (3) paper grid
# and extended grid vs Flex / SDPA with the new defaults.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*:*MhaChoice*:*Prepared*:*Bench*' > /tmp/gpu_tests.log 2>&1; rc=$?; echo "gpu tests rc=$rc"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" /tmp/gpu_tests.log | head -12
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -60
echo "at $(( $(date +%s) - t0 )) s"
for dt in f16 bf16; do echo "$dt: $($S bench mha --pattern longformer --seq 4096 --batch 1 --heads 12 --dim 64 --dtype $dt --runs 100 --no-counters | grep -E '^kernel|^check|^latency' | tr -s ' ' | cut -c1-100 | paste -sd'|')"; done | tee $OUT/bench_dtype.txt
cd tests/compare
PYTHONUNBUFFERED=1 timeout 200 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 185 --out $OUT/paper.json > $OUT/paper.log 2>&1; echo "paper rc=$?"; tail -9 $OUT/paper.log
PYTHONUNBUFFERED=1 timeout 140 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so --grid extended --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 120 --out $OUT/extended.json > $OUT/extended.log 2>&1; echo "extended rc=$?"; tail -9 $OUT/extended.log
echo "total $(( $(date +%s) - t0 )) s"
