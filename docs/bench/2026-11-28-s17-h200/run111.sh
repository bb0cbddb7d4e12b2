#!/usr/bin/env bash
# Device run 111 (H200, 2026-11-28, session 17): the code committed after run 110 (the C API
# split into inputs / launch, the CLI's cmd_run_* and bench-report splits, segment_model split,
# Python Mask.from_slices / from_intervals / document) through the CLI end-to-end test with a
# GPU, the layer / tune / chain / prepared / capi GPU suites, every Python GPU test, a chain
# and an MHA benchmark, and the HGMMA count of the Hopper objects.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "HGMMA: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)"
timeout 150 tests/app/cli_test.sh /tmp/b/app/stof > $OUT/cli_test.log 2>&1; echo "cli_test rc=$?"; tail -3 $OUT/cli_test.log
echo "at $(( $(date +%s) - t0 )) s"
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Layer*:*Tune*:*Chain*:*PreparedMha*:*Recompos*:*GemmNorm*' > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
/tmp/b/app/stof bench chain --shape G4 --json > $OUT/chain_g4.json 2>&1; echo "bench chain rc=$?"; head -c 600 $OUT/chain_g4.json; echo
/tmp/b/app/stof bench mha --pattern causal --seq 8192 --batch 8 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --q-len 1 --no-counters > $OUT/mha_decode.txt 2>&1; echo "bench mha rc=$?"; tail -8 $OUT/mha_decode.txt
echo "total $(( $(date +%s) - t0 )) s"
