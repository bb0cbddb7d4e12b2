#!/usr/bin/env bash
# Device run 128 (H200, 2026-11-28, session 19): where a B 1 decode step's time goes. The debug
# stamps of stamps.patch (applied here only, not landed: %globaltimer at each split CTA's start
# and end, clock64 at its phases) on the 40th split launch of `stof bench mha` at L_k 32768 and
# 131072 (B 1, 32 query heads over 8, d 128, bf16), read by stamps.py.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
git apply docs/bench/2026-11-28-s19-h200/stamps.patch 2>/dev/null || patch -p1 < docs/bench/2026-11-28-s19-h200/stamps.patch || exit 1
STOF_BUILD_TARGETS="stof" scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
tail -1 $OUT/build.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for L in 32768 131072; do
  STOF_STAMPS=$OUT/stamps_$L.txt timeout 60 /tmp/b/app/stof bench mha --pattern causal --seq $L --q-len 1 --batch 1 --heads 32 --kv-heads 8 --head-dim 128 --dtype bf16 --no-counters 2>&1 | grep -E "latency|floor  "
  python3 docs/bench/2026-11-28-s19-h200/stamps.py $OUT/stamps_$L.txt $(( L / 16 * 128 * 2 * 2 * 8 / 8 ))
done
echo "total $(( $(date +%s) - t0 )) s"
