#!/usr/bin/env bash
# Device run 87: after the review's simplifications (the C API's launches share one
# set-device-and-report helper; bound calls need C API version 5, no Python fallback): the
# C API and CLI built, every Python test (GPU ones included), primitives.py once more.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=docs/bench/2026-11-27-python-h100
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests > $OUT/run87_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run87_python_tests.log
PYTHONUNBUFFERED=1 timeout 60 python3 $D/primitives.py $OUT/run87_primitives.json | head -4
