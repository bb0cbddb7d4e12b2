#!/usr/bin/env bash
# Device run 125 (H200, 2026-11-28, session 19): KV caches past a square mask's 32768 keys
# (commit "KV caches past 32768 keys"): the Hopper shape GPU tests (LongCacheRowsMatchReference
# among them), the Python shape tests (decode / prefill rows over 65537-262144 keys, the
# refusals past the limits), `stof bench mha` of a decode step over 131072 keys, and the decode
# rows of tests/compare/shapes_compare.py at L_k 32768 (this run's baseline), 131072 and 262144
# (dense, and a 4096-key window) against SDPA cuDNN / flash and FlexAttention.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
timeout 150 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*HopperShapes*:*HopperPatterns*' > $OUT/run125_gpu_tests.log 2>&1; echo "shape gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran|Lk(65601|131072|200003|262144)" $OUT/run125_gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p test_gpu_shapes.py -k GroupedShapesTest -v > $OUT/run125_python.log 2>&1 < /dev/null; echo "python shape tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|caches" $OUT/run125_python.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
timeout 60 /tmp/b/app/stof bench mha --pattern causal --seq 131072 --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 2>&1 | tail -12
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 260 python3 tests/compare/shapes_compare.py --only decode --match "Lk32768 B1" --match Lk131072 --match Lk262144 --json $OUT/run125_decode.json 2>&1 | grep -v Warning | tail -25
echo "total $(( $(date +%s) - t0 )) s"
