#!/usr/bin/env bash
# Device run 91: where the compiled call's host time goes against the C API from C. Run 90
# found 10.6 us per stof.attention call against 5.3 for host_loop.c's own process, but also
# 10.5-11.1 for the bare ctypes call: so primitives.py now also runs host_loop.c's loop inside
# its own process (HOST_LOOP_LIB: same plan, context and stream), on torch's default stream and
# on a side stream. Builds the C API and stof_eager; no tests (run 90 ran them on this code).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
D=docs/bench/2026-11-28-extension-h100
export STOF_BUILD_TARGETS="stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
python3 -m stof.extension --quiet > $OUT/run91_extension_build.log 2>&1; echo "extension build rc=$?"
gcc -O2 $D/host_loop.c -I kernels/capi -I/usr/local/cuda/include -L/tmp/b/kernels -lstof_capi \
  -L/usr/local/cuda/lib64 -lcudart -o /tmp/host_loop && LD_LIBRARY_PATH=/tmp/b/kernels:$LD_LIBRARY_PATH /tmp/host_loop | tee $OUT/run91_host_loop.txt
gcc -O2 -shared -fPIC $D/host_loop.c -I kernels/capi -I/usr/local/cuda/include -L/tmp/b/kernels -lstof_capi \
  -L/usr/local/cuda/lib64 -lcudart -o /tmp/host_loop.so || echo "host_loop.so build failed"
HOST_LOOP_LIB=/tmp/host_loop.so PYTHONUNBUFFERED=1 timeout 120 python3 $D/primitives.py $OUT/run91_primitives.json; echo "primitives rc=$?"
LD_LIBRARY_PATH=/tmp/b/kernels:$LD_LIBRARY_PATH /tmp/host_loop | tee $OUT/run91_host_loop_after.txt
echo "total $(( $(date +%s) - t0 )) s"
