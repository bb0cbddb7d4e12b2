#!/usr/bin/env bash
# Device run 126 (and, as RUN=run130, after the merge by warps; H200, 2026-11-28, session 19):
# the whole GPU test binary as one process on this session's code (the long-cache shapes, the
# split mma.sync kernels, the Hopper chain), and the Hopper objects' HGMMA count.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof_capi stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "HGMMA in libstof_capi: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)"
timeout 480 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/${RUN:-run126}_gpu_tests.log 2>&1; echo "gpu tests (one process) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/${RUN:-run126}_gpu_tests.log | head -20
grep -c "^\[       OK \]" $OUT/${RUN:-run126}_gpu_tests.log
gzip -f $OUT/${RUN:-run126}_gpu_tests.log
echo "total $(( $(date +%s) - t0 )) s"
