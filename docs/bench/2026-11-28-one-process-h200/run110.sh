#!/usr/bin/env bash
# Device run 110 (H200, 2026-11-28): the whole GPU test binary as ONE process, to its end if the
# session's device time allows (issue 35: the studio profiles in one long-lived process; run 103
# got through 411 of 519 tests in 330 s). The log streams to $OUT, so a cut run still reports.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
STOF_BUILD_TARGETS="stof_gpu_tests" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout $(( 465 - ($(date +%s) - t0) )) /tmp/b/tests/gpu/stof_gpu_tests > $OUT/gpu_tests_one_process.log 2>&1; echo "gpu tests (one process) rc=$?"
grep -cE "^\[       OK \]" $OUT/gpu_tests_one_process.log | sed 's/^/ok: /'
grep -E "^\[  (PASSED|FAILED|SKIPPED) |^\[  FAILED|tests ran" $OUT/gpu_tests_one_process.log | head -12
gzip -k $OUT/gpu_tests_one_process.log
echo "total $(( $(date +%s) - t0 )) s"
