#!/usr/bin/env bash
# Device run 48 (session 6): every GPU test after the tests/ refactor (one DeviceBuffer for
# the GPU tests, shared helpers) and the kernels/common refactor; where stof.attention's
# eager per-call overhead goes (cProfile of 3000 calls at B1 L128).
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 400 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/gpu_tests.log | head -12
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
timeout 60 python3 - > $OUT/attention_cprofile.txt 2>&1 <<'PY'
import cProfile, pstats, torch, numpy as np, stof
L = 128
i, j = np.indices((L, L)); m = stof.Mask(abs(i - j) < 16)
q, k, v = (torch.randn(1, 12, L, 64, device="cuda", dtype=torch.float16) for _ in range(3))
with torch.no_grad():
    for _ in range(50): stof.attention(q, k, v, mask=m)
    torch.cuda.synchronize()
    pr = cProfile.Profile(); pr.enable()
    for _ in range(3000): stof.attention(q, k, v, mask=m)
    pr.disable(); torch.cuda.synchronize()
pstats.Stats(pr).sort_stats("tottime").print_stats(18)
PY
echo "cprofile rc=$?"; grep -E "function calls|tottime" -A20 $OUT/attention_cprofile.txt | head -30
