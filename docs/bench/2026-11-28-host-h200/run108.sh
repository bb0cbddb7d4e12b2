#!/usr/bin/env bash
# Device run 108 (H200, 2026-11-28): run 107's host profile plus whole generate() calls (32 new
# tokens after 2048, cProfile by cumulative time), stof against sdpa
# (python/bench/hf_host_profile.py).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python:$PWD/python/bench
PYTHONUNBUFFERED=1 timeout 400 python3 python/bench/hf_host_profile.py --out-dir $OUT --json $OUT/run108_host_profile.json > $OUT/host.log 2>&1; echo "profile rc=$?"
grep "^{" $OUT/host.log | cut -c1-200
for f in $OUT/host_llama_generate_*.txt; do echo "== $f"; grep -E "stof|generate|_capi|ncalls" $f | head -25 | cut -c1-170; done
rm -f $OUT/host_bert_* $OUT/host_llama_decode_*
echo "total $(( $(date +%s) - t0 )) s"
