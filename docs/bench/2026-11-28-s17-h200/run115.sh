#!/usr/bin/env bash
# Device run 115 (H200, 2026-11-28, session 17): padding with holes read as per row kept keys
# (stof.hf._kept_key_rows: only the [B, L] flags come to the host, and a batch seen before
# reuses its masks): the Python GPU tests of the HF backend and the shapes, then
# python/bench/hf_padding_bench.py --holes as in run 114, and again with --fresh (the masks
# built again before every stof forward, as for padding never seen before).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python:$PWD/python/bench
PYTHONUNBUFFERED=1 timeout 200 python3 -m unittest discover -s python/tests -p 'test_gpu_[hs]*.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU hf + shape tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
timeout 200 python3 python/bench/hf_padding_bench.py --holes --reps 10 --out $OUT/run115_holes.json > $OUT/holes.log 2>&1; echo "holes rc=$?"
grep -E "^\{" $OUT/holes.log | tail -8
timeout 200 python3 python/bench/hf_padding_bench.py --holes --fresh --reps 10 --out $OUT/run115_holes_fresh.json > $OUT/holes_fresh.log 2>&1; echo "holes fresh rc=$?"
grep -E "^\{" $OUT/holes_fresh.log | tail -8
echo "total $(( $(date +%s) - t0 )) s"
