#!/usr/bin/env bash
# Device run 64 (planned in session 8): branch pending-gpu/bf16 (check it out first): every
# Hopper variant in bf16, stof_prepare_dtype (C API 4), stof.attention on bf16.
# (1) The GPU tests that touch it (Hopper, choice, prepared, SASS: the printed BF16 HGMMA
# count), then all GPU tests if time allows; (2) python GPU tests; (3) CLI test; (4) bench
# fp16 vs bf16 and mha_compare --dtype bf16 against Flex (bf16) on a few rows.
set -uo pipefail
cd "$(dirname "$0")/.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
timeout 100 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter="*Sass*:*Bf16*" > /tmp/gpu_tests.log 2>&1; rc=$?; echo "gpu tests rc=$rc"
grep -vE "^\[ RUN|^\[       OK" /tmp/gpu_tests.log | head -40 | tee $OUT/gpu_tests_summary.log
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -80 > $OUT/gpu_test_failures.log
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=$S PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 80 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head
timeout 85 tests/app/cli_test.sh $S > /tmp/cli.log 2>&1; echo "cli test rc=$?"; tail -2 /tmp/cli.log
for dt in f16 bf16; do echo "$dt: $($S bench mha --pattern bigbird --seq 4096 --batch 8 --heads 12 --dim 128 --dtype $dt --runs 100 --no-counters | grep -E '^kernel|^check|^latency|^throughput' | tr -s ' ' | cut -c1-90 | paste -sd'|')"; done | tee $OUT/bench_dtype.txt
cd tests/compare
PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so --dtype bf16 \
  --filter '(bigbird|sliding_window)/L(1024|4096)/B(1|8)/d(64|128)' --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 120 \
  --out $OUT/compare_bf16.json > $OUT/compare_bf16.log 2>&1; echo "compare bf16 rc=$?"; tail -8 $OUT/compare_bf16.log
echo "total $(( $(date +%s) - t0 )) s"
