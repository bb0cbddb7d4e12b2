#!/usr/bin/env bash
# Device run 82 (meant to follow run 81 on its build /tmp/b): host_costs.cu (the host cost of
# a launch's pieces, C++) and primitives.py again with the allocation variants. The machine
# had gone back (30 s idle) and this call got a fresh one: host_costs ran, primitives.py
# failed for want of the build (run 83 repeats it with a build).
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=docs/bench/2026-11-27-python-h100
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
nvcc -O2 -arch=sm_90a $D/host_costs.cu -o /tmp/host_costs && /tmp/host_costs | tee $OUT/run82_host_costs.txt
PYTHONUNBUFFERED=1 timeout 60 python3 $D/primitives.py $OUT/run82_primitives.json; echo "primitives rc=$?"
