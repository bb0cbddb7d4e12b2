#!/usr/bin/env bash
# Prepared for the next device session (issue 31; not run yet): what a split decode launch's
# last chunk waits on during its 3-4 us merge (docs/benchmarks.md, "Step 7"). ncu samples the
# warps' stall reasons per SASS instruction on the 40th launch of the B 1 L_k 32768 decode
# step; the merge and epilogue instructions (after the arrival's atom.acq_rel) show whether
# their time is "no_instruction" (a cold instruction cache: the code runs once per SM),
# "long_scoreboard" (the partials' loads), "barrier" or "membar". Output: $OUT/merge_stalls.csv
# (ncu --page source --csv) and the summary of the WarpStateStats section.
set -uo pipefail
cd "$(dirname "$0")/../../.."
STOF_BUILD_TARGETS="stof" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
args="bench mha --pattern causal --seq 32768 --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --no-counters"
timeout 300 ncu --kernel-name regex:HopperAttentionKernel --launch-skip 39 --launch-count 1 \
  --section WarpStateStats --section SourceCounters --export /tmp/merge /tmp/b/app/stof $args \
  > $OUT/ncu.log 2>&1; echo "ncu rc=$?"
ncu --import /tmp/merge.ncu-rep --page source --csv --print-source sass > $OUT/merge_stalls.csv 2>&1
ncu --import /tmp/merge.ncu-rep --section WarpStateStats --page details > $OUT/warp_state.txt 2>&1
grep -n "ATOM\|ATOMG" $OUT/merge_stalls.csv | head -5
