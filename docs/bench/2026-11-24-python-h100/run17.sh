#!/usr/bin/env bash
# Device run 17 (session 3): the python/ package's tests (issue 18) on the GPU machine, first
# run: stof.attention against an fp32 reference, torch.compile, CUDA graphs, Flex interop, and
# the Hugging Face backend.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof
PYTHONUNBUFFERED=1 timeout 420 python3 -m unittest discover -s python/tests -v > $OUT/python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED|skipped '" $OUT/python_tests.log | head -40
