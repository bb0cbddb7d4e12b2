#!/usr/bin/env bash
# Device run 77 (after run 76, on its builds /tmp/a and /tmp/b: the machine must still be
# warm; otherwise run run76.sh's build part first): (1) the extended grid, ours only, old and
# new alternating, two rounds; (2) the paper grid with the new tree against FlexAttention
# (128, 64) and SDPA, CUDA-graph replay, as run 72 (all 96 rows).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
D=docs/bench/2026-11-27-bitmaps-h100
[ -x /tmp/a/app/stof ] && [ -x /tmp/b/app/stof ] || { echo "no builds: run run76.sh first"; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
cd tests/compare
for r in 1 2; do for t in a b; do
  PYTHONUNBUFFERED=1 timeout 50 python3 mha_compare.py --stof /tmp/$t/app/stof --lib /tmp/$t/kernels/libstof_capi.so \
    --grid extended --ours auto --methods ours --cuda-graph --time-budget 40 --out $OUT/ext_${t}_r$r.json > /tmp/e$t$r.log 2>&1
  echo "ext $t r$r rc=$? at $(( $(date +%s) - t0 )) s"
done; done
python3 ../../$D/ab.py $OUT ext 2 > $OUT/ab_ext.txt; tail -8 $OUT/ab_ext.txt
PYTHONUNBUFFERED=1 timeout 300 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --ours auto --methods ours,flex,sdpa --cuda-graph --time-budget 270 --out $OUT/compare_paper.json > $OUT/compare_paper.log 2>&1
echo "paper rc=$? at $(( $(date +%s) - t0 )) s"; tail -12 $OUT/compare_paper.log
