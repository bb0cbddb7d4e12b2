#!/usr/bin/env bash
# Device run 122 (H200, 2026-11-28, session 18): the Hopper chain's two cluster reductions side
# by side (run 121's pushed one, now one 16-byte remote store per four columns after a swap
# between lane pairs, and with a fence that ptxas needed to keep the wgmmas asynchronous; the
# pulled one with every peer's load issued before the sum, STOF_HOPPER_CHAIN_REDUCE=pull): the
# chain GPU tests under each, memcheck, then `stof bench chain --json` under each.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Chain*' > $OUT/gpu_tests.log 2>&1; echo "chain tests (push) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|worst" $OUT/gpu_tests.log | head -10
STOF_HOPPER_CHAIN_REDUCE=pull timeout 120 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain*' > $OUT/gpu_tests_pull.log 2>&1; echo "chain tests (pull) rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|Failure|worst" $OUT/gpu_tests_pull.log | head -10
timeout 90 compute-sanitizer --tool memcheck /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='HopperChain.ThroughTheBackend:HopperChain.RaggedTilesBiasesGelu:HopperChain.FfnFormRelu' > $OUT/memcheck.log 2>&1; echo "memcheck rc=$?"
grep -E "ERROR SUMMARY|PASSED|FAILED" $OUT/memcheck.log | head -5
timeout 200 /tmp/b/app/stof bench chain --json > $OUT/run122_chain_push.json 2>&1; echo "bench push rc=$?"
STOF_HOPPER_CHAIN_REDUCE=pull timeout 200 /tmp/b/app/stof bench chain --json > $OUT/run122_chain_pull.json 2>&1; echo "bench pull rc=$?"
python3 - "$OUT" <<'PY'
import json, sys
push = json.load(open(sys.argv[1] + "/run122_chain_push.json"))["rows"]
pull = json.load(open(sys.argv[1] + "/run122_chain_pull.json"))["rows"]
for a, b in zip(push, pull):
    f = lambda r: " ".join(f"x{s['cluster']}:{s['us']:.1f}" for s in r["hopper"]["settings"])
    print(f"{a['shape']:4} cuBLAS {a['cublas_us']:5.1f} | push {f(a)} | pull {f(b)} (cuBLAS {b['cublas_us']:.1f})")
PY
echo "total $(( $(date +%s) - t0 )) s"
