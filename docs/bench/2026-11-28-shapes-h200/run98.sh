#!/usr/bin/env bash
# Device run 98: the final tree of this step. Builds the CLI, the C API and the GPU tests;
# `stof bench mha` on grouped / decode shapes (--kv-heads, --q-len: the reference check and the
# floor); every Python GPU test after run 97's fixes (the HF backend's capture path had made its
# causal mask on the host); whole Hugging Face models with grouped heads
# (python/bench/hf_llama_bench.py: a 4-layer Llama-style model and its Mistral-style
# sliding-window twin, stof / sdpa / flex_attention); then the whole GPU test binary as one
# process (the studio is one long-lived process).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
for args in "--q-len 1 --batch 4" "--q-len 16 --batch 4" "--batch 1 --seq 16384"; do
  timeout 60 /tmp/b/app/stof bench mha --pattern causal --seq 32768 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --runs 100 $args --json > $OUT/cli.json 2>>$OUT/cli.err
  python3 -c "import json; j=json.load(open('$OUT/cli.json')); c=j['check']; f=j['floor']; print('cli bench mha $args:', j['choice']['block_m'], j['choice']['block_n'], j['choice'].get('packed_gqa'), 'check', c['passed'], '%.2e' % c['row_err'], 'median %.1f us' % j['latency']['median_us'], '%.2fx floor' % f['ratio_to_floor'])" 2>&1 | tail -1
done
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' -v > $OUT/run98_python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run98_python_tests.log | head -10
PYTHONUNBUFFERED=1 timeout 200 python3 python/bench/hf_llama_bench.py --out $OUT/run98_hf_llama.json > $OUT/run98_hf_llama.log 2>&1; echo "hf bench rc=$?"
tail -9 $OUT/run98_hf_llama.log
echo "at $(( $(date +%s) - t0 )) s"
timeout $(( 570 - ($(date +%s) - t0) )) /tmp/b/tests/gpu/stof_gpu_tests > $OUT/run98_gpu_tests_one_process.log 2>&1; echo "gpu tests (one process) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/run98_gpu_tests_one_process.log | head -12
echo "total $(( $(date +%s) - t0 )) s"
