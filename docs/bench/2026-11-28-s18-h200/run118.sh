#!/usr/bin/env bash
# Device run 118 (H200, 2026-11-28, session 18): the code landed after session 17's last device
# run (RecomposedMha::Launch split, LaunchHopperAttention helpers, DeviceBlockLayout::UploadAll
# helpers, the CUPTI host / target split, the Hopper mask's shared ApplyRowWords, the shape-test
# helpers, the Python documents-mask test): the whole GPU test binary as one process, every
# Python GPU test and the HGMMA count of the Hopper objects.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "HGMMA: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)"
echo "at $(( $(date +%s) - t0 )) s"
timeout 380 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests (one process) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -20
gzip -f $OUT/gpu_tests.log $OUT/python_tests.log
echo "total $(( $(date +%s) - t0 )) s"
