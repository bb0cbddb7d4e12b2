#!/usr/bin/env bash
# Device run 83: the C API's own host cost per call (capi_loop.c) and the Python pieces again
# with the allocation variants (primitives.py). Builds the CLI and the C API first.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=docs/bench/2026-11-27-python-h100
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/b/kernels:/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
gcc -O2 $D/capi_loop.c -I kernels/capi -I/usr/local/cuda/include -L/tmp/b/kernels -lstof_capi \
  -L/usr/local/cuda/lib64 -lcudart -o /tmp/capi_loop && /tmp/capi_loop | tee $OUT/run83_capi_loop.txt
PYTHONUNBUFFERED=1 timeout 90 python3 $D/primitives.py $OUT/run83_primitives.json; echo "primitives rc=$?"
