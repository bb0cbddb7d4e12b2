#!/usr/bin/env bash
# Device run 90: the tree to commit (the compiled eager path; the C API gives the caller's
# current device back). Builds the CLI and the C API, builds stof_eager with
# `python -m stof.extension` (timed), runs every Python test, primitives.py and host_loop.c on
# the same band mask and shapes (host us per call in windows of 256 calls after a synchronize;
# loop throughput: GPU us per call over 2048 back-to-back calls), then hf_compare's bridge part
# (now with the windowed host column).
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
python3 -m stof.extension > $OUT/run90_extension_build.log 2>&1; echo "extension build rc=$? in $(( $(date +%s) - t1 )) s"
tail -3 $OUT/run90_extension_build.log
python3 -m stof.extension --status
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests > $OUT/run90_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run90_python_tests.log
PYTHONUNBUFFERED=1 timeout 90 python3 $D/primitives.py $OUT/run90_primitives.json; echo "primitives rc=$?"
gcc -O2 $D/host_loop.c -I kernels/capi -I/usr/local/cuda/include -L/tmp/b/kernels -lstof_capi \
  -L/usr/local/cuda/lib64 -lcudart -o /tmp/host_loop && LD_LIBRARY_PATH=/tmp/b/kernels:$LD_LIBRARY_PATH /tmp/host_loop | tee $OUT/run90_host_loop.txt
PYTHONUNBUFFERED=1 timeout 120 python3 python/bench/hf_compare.py --parts bridge --out $OUT/run90_bridge.json --md $OUT/run90_bridge.md --time-budget 100 > $OUT/run90_bridge.log 2>&1; echo "bridge rc=$?"; tail -10 $OUT/run90_bridge.md
echo "total $(( $(date +%s) - t0 )) s"
