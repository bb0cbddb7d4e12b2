#!/usr/bin/env bash
# Device run 129 (H200, 2026-11-28, session 19): a decode tile's chunks merged by the four
# warps of the warpgroup (run 105's merge_by_warps.patch, its split.cuh / kernel parts, at the
# 16 chunks of today) after run 128's stamps put 9.1 us of a 44.7 us B 1 step in the last
# chunk's serial merge. 1) the stamps again (stamps_mbw.patch, reverted after); 2) the shape
# and split GPU tests, compute-sanitizer on the decode split test; 3) shapes_compare's decode
# rows against SDPA and Flex.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
d=docs/bench/2026-11-28-s19-h200
patch -p1 < $d/stamps_mbw.patch > /dev/null || exit 1
STOF_BUILD_TARGETS="stof" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for L in 32768 131072; do
  STOF_STAMPS=$OUT/stamps_$L.txt timeout 60 /tmp/b/app/stof bench mha --pattern causal --seq $L --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --no-counters 2>&1 | grep -E "^latency|^floor"
  python3 $d/stamps.py $OUT/stamps_$L.txt $(( L / 16 * 512 )) | grep -E "CTAs|merge|start -> end|stream rate" 
done
for s in "8192 8" "32768 4"; do set -- $s
  timeout 60 /tmp/b/app/stof bench mha --pattern causal --seq $1 --q-len 1 --batch $2 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --no-counters 2>&1 | grep -E "^latency|^floor"
done
patch -R -p1 < $d/stamps_mbw.patch > /dev/null || exit 1
echo "at $(( $(date +%s) - t0 )) s"
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build2.log 2>&1 || { tail -30 $OUT/build2.log; exit 1; }
tail -1 $OUT/build2.log
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*HopperShapes*:*HopperPatterns*:*Split*:*Decode*' > $OUT/run129_gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED" $OUT/run129_gpu_tests.log | head
timeout 120 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='GpuHopperShapes.DecodeSplitAndPackingMatchReference' > $OUT/run129_memcheck.log 2>&1; echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/run129_memcheck.log | tail -3
echo "at $(( $(date +%s) - t0 )) s"
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 200 python3 tests/compare/shapes_compare.py --only decode --match "Lk8192 B8" --match "Lk32768" --match "Lk131072" --json $OUT/run129_decode.json 2>&1 | grep -E "^row|^decode"
echo "total $(( $(date +%s) - t0 )) s"
