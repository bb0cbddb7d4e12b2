#!/usr/bin/env bash
# Device run 81: issue 18's bound eager launches (python/stof/_eager.py). Builds the CLI and
# the C API; the Python GPU tests (attention and hf); primitives.py (the host cost per call,
# piece by piece); hf_compare's bridge part (stof.attention bound / full path / bare ctypes
# against stof bench mha, in one process).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
D=docs/bench/2026-11-27-python-h100
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/run81_python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run81_python_gpu_tests.log | head
PYTHONUNBUFFERED=1 timeout 60 python3 $D/primitives.py $OUT/run81_primitives.json; echo "primitives rc=$?"
PYTHONUNBUFFERED=1 timeout 100 python3 python/bench/hf_compare.py --parts bridge --out $OUT/run81_bridge.json --md $OUT/run81_bridge.md --time-budget 90 > $OUT/run81_bridge.log 2>&1; echo "bridge rc=$?"; tail -10 $OUT/run81_bridge.md
echo "total $(( $(date +%s) - t0 )) s"
