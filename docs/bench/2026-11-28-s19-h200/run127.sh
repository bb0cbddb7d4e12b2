#!/usr/bin/env bash
# Device run 127 (H200, 2026-11-28, session 19): a Llama-style model's generate() over a
# 33000-token prompt (python/tests/test_gpu_shapes.py,
# test_generate_over_a_cache_past_a_square_mask): the prefill falls back naming why, every
# decode step over the 33000+ keys runs our kernel, logits against sdpa.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof_capi stof_engine_capi" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 240 python3 -m unittest discover -s python/tests -p test_gpu_shapes.py -k test_generate_over_a_cache_past -v > $OUT/run127_python.log 2>&1 < /dev/null; echo "python rc=$?"
grep -vE "Warning|warn" $OUT/run127_python.log | tail -15
echo "total $(( $(date +%s) - t0 )) s"
