#!/usr/bin/env bash
# Device run 47 (session 6): the kernels/common refactor (warp GEMM step, QuadSum, one
# recompose launcher): the GPU tests of the families it touched, and `stof bench chain` A/B
# against the kernels before it (kernels_before_refactor.tar); the CLI test's GPU branch
# (bench mha, profile mha); stof.attention's eager fast path: python GPU tests and the bridge
# table A/B against the attention.py before it.
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
export STOF_BUILD_TARGETS="stof stof_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
rm -rf /tmp/v && mkdir /tmp/v && cp -r $R/. /tmp/v/ && rm -rf /tmp/v/kernels && tar -xf .devdeps/kernels_before_refactor.tar -C /tmp/v
(cd /tmp/v && STOF_BUILD_TARGETS=stof scripts/gpu-build /tmp/b0 > $OUT/build0.log 2>&1) &
bpid=$!
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*GemmChain*:*GemmNorm*:*Recompos*:*MhaCorrectness*:*MhaEdge*:*LayerRunner*:*MmaFragments*:*MhaSmall*:*NativeMha*' > $OUT/gpu_tests_kernels.log 2>&1; echo "kernel gpu tests rc=$?"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran" $OUT/gpu_tests_kernels.log | head -8
wait $bpid; tail -1 $OUT/build0.log
for b in b0 b b0 b; do echo "== $b"; /tmp/$b/app/stof bench chain --shape G1 G4 G8 G12 --repeats 50 2>&1 | tail -6; done > $OUT/bench_chain_ab.txt 2>&1; cat $OUT/bench_chain_ab.txt
timeout 150 tests/app/cli_test.sh /tmp/b/app/stof > $OUT/cli_test.log 2>&1; echo "cli test rc=$?"; tail -3 $OUT/cli_test.log
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof
PYTHONPATH=$PWD/python PYTHONUNBUFFERED=1 timeout 90 python3 -m unittest discover -s python/tests -p "test_gpu_*.py" > $OUT/python_gpu_tests.log 2>&1; echo "python gpu tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_gpu_tests.log | head -10
rm -rf /tmp/pyold && cp -r python /tmp/pyold && cp .devdeps/attention_before_fastpath.py /tmp/pyold/stof/attention.py
for v in old new old new; do P=$([ $v = old ] && echo /tmp/pyold || echo $PWD/python)
  (cd $OUT && PYTHONPATH=$P timeout 60 python3 $R/python/bench/hf_compare.py --parts bridge --md bridge_$v.md --out bridge_$v.json > bridge_$v.log 2>&1; echo "bridge $v rc=$?"; grep -E "^\| [0-9]" bridge_$v.md)
done
