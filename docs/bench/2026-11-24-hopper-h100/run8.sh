#!/usr/bin/env bash
# Device run 8: the merged tree (issue 16 part 1 + the Hopper kernel): every GPU test, a bench.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 360 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|^\[==========\]|HGMMA" $OUT/gpu_tests.log | head -12
for pat in full causal; do for d in 64 128; do
  echo "$pat d$d auto: $(timeout 60 /tmp/b/app/stof bench mha --pattern $pat --seq 4096 --batch 4 --heads 12 --dim $d --runs 50 --no-counters 2>&1 | grep -E '^(kernel|latency|throughput)' | sed -E 's/ +/ /g' | cut -c1-75 | tr '\n' '|')"
done; done | tee $OUT/bench_auto.txt
