#!/usr/bin/env bash
# Device run 18 (session 3): what T5 passes to an attention backend (probe), and the python/
# GPU tests after the registry fix.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
# (the T5 probe ran in the previous call)
PYTHONUNBUFFERED=1 timeout 300 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" -v > $OUT/python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|skipped '" $OUT/python_tests.log | head -20
