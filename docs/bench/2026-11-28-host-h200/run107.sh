#!/usr/bin/env bash
# Device run 107 (H200, 2026-11-28): where the host time goes in issue 31's two slow
# whole-model rows (BERT-base padded forward, Llama-style decode step), stof against sdpa:
# python/bench/hf_host_profile.py (torch.profiler and cProfile tables, JSON summary).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python:$PWD/python/bench
PYTHONUNBUFFERED=1 timeout 400 python3 python/bench/hf_host_profile.py --out-dir $OUT --json $OUT/run107_host_profile.json > $OUT/host.log 2>&1; echo "profile rc=$?"
tail -8 $OUT/host.log
for f in $OUT/host_*.txt; do echo "== $f"; grep -E "aten::item|_local_scalar|Synchronize|cudaMemcpy|Self CPU time total" $f | cut -c1-160; sed -n '/tottime/,+12p' $f | cut -c1-150; done
echo "total $(( $(date +%s) - t0 )) s"
