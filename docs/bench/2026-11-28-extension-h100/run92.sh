#!/usr/bin/env bash
# Device run 92 (two H100s): the C API gives the caller's current device back. Builds the CLI,
# the C API and stof_eager, then runs every Python test with both GPUs visible, among them
# test_current_device_is_left_alone (skipped on one GPU): stof.attention on cuda:1 under
# cuda:0, through the first call, the bound and compiled launches and clear_cache.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"; nvidia-smi -L
python3 -m stof.extension --quiet > $OUT/run92_extension_build.log 2>&1; echo "extension build rc=$?"
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -v > $OUT/run92_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "current_device|^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run92_python_tests.log
echo "total $(( $(date +%s) - t0 )) s"
