#!/usr/bin/env bash
# Device run 2: intra-warpgroup overlap; tests, benches, compare on the paper grid at B16.
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
S=/tmp/b/app/stof
echo "== tests"
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*:GpuMhaBackend.*:GpuPreparedMha.*:Masks/GpuMhaCorrectness.MatchesReference/bigbird*:Masks/GpuMhaCorrectness.MatchesReference/holes*' > $OUT/tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests ran|HGMMA" $OUT/tests.log | head -20
grep -B2 -A8 "Failure" $OUT/tests.log | head -40
echo "== bench"
b() { timeout 60 $S bench mha "$@" --runs 50 --no-counters 2>&1 | grep -E "^(latency|throughput)" | sed -E 's/ +/ /g' | cut -c1-60 | tr '\n' ' '; echo; }
for d in 64 128; do
  for cfg in "--block 128x128 --warps 12" "--block 128x64 --warps 12"; do
    echo "full L4096 B4 H12 d$d $cfg: $(b --pattern full --seq 4096 --batch 4 --heads 12 --dim $d $cfg)"
    echo "causal L4096 B4 H12 d$d $cfg: $(b --pattern causal --seq 4096 --batch 4 --heads 12 --dim $d $cfg)"
  done
done | tee $OUT/bench.txt
timeout 60 $S profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 --block 128x128 --warps 12 > $OUT/profile_d64.txt 2>&1
timeout 60 $S profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 128 --block 128x128 --warps 12 > $OUT/profile_d128.txt 2>&1
grep -iE "tensor|TFLOP" $OUT/profile_d*.txt | head
echo "== compare"
cd tests/compare && PYTHONUNBUFFERED=1 timeout 260 python3 mha_compare.py --stof $S --lib /tmp/b/kernels/libstof_capi.so \
  --filter '/B16/' --ours auto,128x128x12,128x64x12 --methods ours,flex,sdpa --cuda-graph --time-budget 200 \
  --out $OUT/compare_b16.json > $OUT/compare_b16.log 2>&1; echo "compare rc=$?"; tail -45 $OUT/compare_b16.log
