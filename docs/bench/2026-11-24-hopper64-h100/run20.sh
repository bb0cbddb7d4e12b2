#!/usr/bin/env bash
# Device run 20 (session 3): every GPU test at the tree with the 64x128 tile, then dense
# profiles of the Hopper tiles at d 64 (the 450 TFLOP/s target).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
timeout 420 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/all_gpu_tests.log 2>&1; echo "tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" $OUT/all_gpu_tests.log | head -12
for cfg in "--block 64x128 --warps 5" ""; do
  timeout 60 /tmp/b/app/stof profile mha --pattern full --seq 4096 --batch 4 --heads 12 --dim 64 $cfg > $OUT/p.txt 2>&1
  echo "d64 ${cfg:-auto}: $(grep -E "^kernel|^compute|tensor_op|^latency" $OUT/p.txt | tr '\n' ' ' | sed -E 's/ +/ /g' | cut -c1-420)"
done | tee $OUT/profile_d64_64x128.txt
rm -f $OUT/p.txt
