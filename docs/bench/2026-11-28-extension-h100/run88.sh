#!/usr/bin/env bash
# Device run 88: the compiled eager path (stof_eager). Builds the CLI and the C API, builds the
# module with `python -m stof.extension` (timed), runs every Python test (the GPU ones include
# test_compiled_eager_path), primitives.py (host us per call, piece by piece; in run 88 timed
# as 2000-call loops, since changed to windows), capi_loop.c of 2026-11-27 (the C API from C)
# and hf_compare's bridge part (stof.attention compiled / Python bound / full / bare ctypes
# against stof bench mha, in one process).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
D=docs/bench/2026-11-28-extension-h100
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
t1=$(date +%s)
python3 -m stof.extension > $OUT/run88_extension_build.log 2>&1; echo "extension build rc=$? in $(( $(date +%s) - t1 )) s"
tail -3 $OUT/run88_extension_build.log
python3 -m stof.extension --status
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests > $OUT/run88_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run88_python_tests.log
PYTHONUNBUFFERED=1 timeout 90 python3 $D/primitives.py $OUT/run88_primitives.json; echo "primitives rc=$?"
gcc -O2 docs/bench/2026-11-27-python-h100/capi_loop.c -I kernels/capi -I/usr/local/cuda/include -L/tmp/b/kernels -lstof_capi \
  -L/usr/local/cuda/lib64 -lcudart -o /tmp/capi_loop && LD_LIBRARY_PATH=/tmp/b/kernels:$LD_LIBRARY_PATH /tmp/capi_loop | tee $OUT/run88_capi_loop.txt
PYTHONUNBUFFERED=1 timeout 120 python3 python/bench/hf_compare.py --parts bridge --out $OUT/run88_bridge.json --md $OUT/run88_bridge.md --time-budget 100 > $OUT/run88_bridge.log 2>&1; echo "bridge rc=$?"; tail -10 $OUT/run88_bridge.md
echo "total $(( $(date +%s) - t0 )) s"
