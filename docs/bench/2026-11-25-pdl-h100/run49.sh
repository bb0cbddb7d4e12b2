#!/usr/bin/env bash
# Device run 49 (session 7): validation of three commits never run on a GPU (STOF_ASSIGN_OR_RETURN
# in CPU-side files and in the MHA bench / CUPTI range pass, layer-op validators as lists, the
# profiler split into model/ + capture/): every GPU test, the CLI test's GPU branch, the python
# GPU tests, a bench/profile smoke.
set -uo pipefail
cd "$(dirname "$0")/.."
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
S=/tmp/b/app/stof
$S profile mha --pattern bigbird --seq 1024 --batch 2 --heads 4 > $OUT/profile.txt 2>&1; echo "profile mha rc=$?"; grep -E "DRAM|output check|tensor" $OUT/profile.txt | head -4
$S bench mha --pattern causal --seq 1024 --batch 2 --heads 4 --runs 50 > $OUT/bench.txt 2>&1; echo "bench mha rc=$?"; grep -E "^check|^DRAM" $OUT/bench.txt
timeout 330 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/gpu_tests.log | head -12
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
PYTHONUNBUFFERED=1 timeout 100 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head -10
timeout 90 tests/app/cli_test.sh $S > $OUT/cli_test.log 2>&1; echo "cli test rc=$?"; tail -3 $OUT/cli_test.log
