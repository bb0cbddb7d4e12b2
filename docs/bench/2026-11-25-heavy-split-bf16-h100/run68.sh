#!/usr/bin/env bash
# Device run 68 (session 9): issue 18's hot path with strides worked out once (None when
# packed): python attention GPU tests and the in-process A/B (bridge_ab.py).
set -uo pipefail
cd "$(dirname "$0")/.."
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if [ ! -e /tmp/b/kernels/libstof_capi.so ]; then STOF_BUILD_TARGETS="stof stof_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || exit 3; fi
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 45 python3 -m unittest discover -s python/tests -p "test_gpu_attention.py" > $OUT/python_gpu_attention.log 2>&1; echo "python attention tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_attention.log | head
PYTHONUNBUFFERED=1 timeout 45 python3 .devdeps/bridge_ab.py $OUT/bridge_ab.json; echo "ab rc=$?"
