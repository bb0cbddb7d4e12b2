#!/usr/bin/env bash
# Device run 94: the committed tree's validation after the review (a test helper for the full
# path; a module that loads but cannot be set up leaves the Python path in place). Builds the
# CLI, the C API and stof_eager, runs every Python test.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
python3 -m stof.extension --quiet > $OUT/run94_extension_build.log 2>&1; echo "extension build rc=$?"; python3 -m stof.extension --status
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -v > $OUT/run94_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "compiled|current_device|^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run94_python_tests.log
echo "total $(( $(date +%s) - t0 )) s"
