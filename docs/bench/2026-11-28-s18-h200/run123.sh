#!/usr/bin/env bash
# Device run 123 (H200, 2026-11-28, session 18): the Hopper chain with both cluster reductions
# as a parameter (HopperChainParams::reduce: push, or pull with every peer's load issued before
# the sum; run 122's pull waited on the wrong barrier) and the default cluster rule; the chain
# GPU tests (both reductions), memcheck, `stof bench chain --json` (every cluster x reduction),
# then the whole GPU test binary as one process, every Python GPU test and the HGMMA counts.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "HGMMA: capi $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA), stof $(cuobjdump -sass /tmp/b/app/stof | grep -c HGMMA)"
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Chain*' > $OUT/chain_tests.log 2>&1; echo "chain tests rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|worst" $OUT/chain_tests.log | head -10
timeout 90 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain.ThroughTheBackend:HopperChain.RaggedTilesBiasesGelu:HopperChain.FfnFormRelu' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
timeout 200 /tmp/b/app/stof bench chain --json > $OUT/run123_chain.json 2>&1; echo "bench rc=$?"
python3 - "$OUT" <<'PY'
import json, sys
for r in json.load(open(sys.argv[1] + "/run123_chain.json"))["rows"]:
    h = r["hopper"]
    f = " ".join(f"x{s['cluster']}{s['reduce'][1]}:{s['us']:.1f}" for s in h["settings"])
    print(f"{r['shape']:4} cuBLAS {r['cublas_us']:5.1f} mhnk {r['best_us']:5.1f} | default x{h['default_cluster']} {h['default_us']:.1f} best {h['best_us']:.1f} | {f}")
PY
echo "at $(( $(date +%s) - t0 )) s"
timeout 330 /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests.log 2>&1; echo "gpu tests (one process) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests.log | head -20
echo "at $(( $(date +%s) - t0 )) s"
PYTHONUNBUFFERED=1 timeout 120 python3 -m unittest discover -s python/tests -p 'test_gpu_*.py' > $OUT/python_tests.log 2>&1 < /dev/null; echo "python GPU tests rc=$?"
grep -E "^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/python_tests.log | head -20
gzip -f $OUT/gpu_tests.log $OUT/python_tests.log
echo "total $(( $(date +%s) - t0 )) s"
