#!/usr/bin/env bash
# Device run 131 (session 20): (1) what the image holds for the studio's device run (OS, glibc,
# X / GL libraries); (2) ConsumeTile as named parts (issue 36) against the kernel before it:
# the Hopper GPU tests on the new code, then our kernel alone from both builds, side by side
# in this run (mha_compare --methods ours, CUDA graphs; old, new, old, new); HGMMA counts of
# both libraries; (3) `stof bench chain --ffn --json`, the FFN baseline of issue 32.
# The old kernel file travels as s20tmp/old_hopper_attention_kernel.cuh (HEAD~ of the split).
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo "[$(( $(date +%s) - t0 )) s] $*"; }
{ cat /etc/os-release | head -2; ldd --version | head -1; ldconfig -p | grep -E -c "libX11|libGL|libglfw|libxcb" ; which Xvfb xvfb-run; } > $OUT/run131_image.txt 2>&1
export STOF_BUILD_TARGETS="stof stof_capi stof_engine_capi stof_gpu_tests"
scripts/gpu-build /tmp/b > $OUT/run131_build.log 2>&1 || { tail -30 $OUT/run131_build.log; exit 1; }
el "new built"
mkdir -p /tmp/old && tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C /tmp/old
cp s20tmp/old_hopper_attention_kernel.cuh /tmp/old/kernels/attention_hopper/hopper_attention_kernel.cuh
(STOF_BUILD_TARGETS=stof_capi /tmp/old/scripts/gpu-build /tmp/b0 > /tmp/old_build.log 2>&1; echo "old build rc=$?" >> /tmp/old_build.log) &
oldpid=$!
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 200 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*:*PreparedMha*:*MhaBackend*' > $OUT/run131_gpu_tests.log 2>&1
echo "gpu tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]|tests ran" $OUT/run131_gpu_tests.log | head -20
wait $oldpid; tail -2 /tmp/old_build.log; el "tests done, old built"
for f in /tmp/b0/kernels/libstof_capi.so /tmp/b/kernels/libstof_capi.so; do echo "HGMMA $f: $(cuobjdump -sass $f | grep -c HGMMA)"; done | tee $OUT/run131_hgmma.txt
cd tests/compare
for round in 1 2; do for v in old new; do
  lib=/tmp/b/kernels/libstof_capi.so; [ $v = old ] && lib=/tmp/b0/kernels/libstof_capi.so
  PYTHONUNBUFFERED=1 timeout 80 python3 mha_compare.py --stof /tmp/b/app/stof --lib $lib --quick --methods ours \
    --cuda-graph --runs 100 --out $OUT/run131_ab_${v}${round}.json > /tmp/ab_${v}${round}.log 2>&1; echo "$v$round rc=$?"
  PYTHONUNBUFFERED=1 timeout 80 python3 mha_compare.py --stof /tmp/b/app/stof --lib $lib --grid extended \
    --filter '^(causal|full)/L4096/.*/d(64|128)' --methods ours --cuda-graph --runs 100 --out /tmp/abx_${v}${round}.json > /tmp/abx_${v}${round}.log 2>&1
  echo "$v$round extended rc=$?"
done; done
python3 - $OUT /tmp <<'PY' > $OUT/run131_ab.txt
import json, sys, glob
out, tmp = sys.argv[1], sys.argv[2]
rows = {}
for v in ("old", "new"):
    for r in (1, 2):
        for f in (f"{out}/run131_ab_{v}{r}.json", f"{tmp}/abx_{v}{r}.json"):
            try: d = json.load(open(f))
            except Exception as e: print("missing", f, e); continue
            for c in d["results"]:
                lat = c.get("methods", {}).get("ours", {}).get("graph_latency")
                rows.setdefault(c["name"], {})[f"{v}{r}"] = lat
for n, m in rows.items():
    print(n, " ".join(f"{k}={v}" for k, v in sorted(m.items())))
PY
cat $OUT/run131_ab.txt
cd ../..
el "ab done"
timeout 150 /tmp/b/app/stof bench chain --ffn --json > $OUT/run131_chain_ffn.json 2> $OUT/run131_chain_ffn.err; echo "bench chain rc=$?"
tail -3 $OUT/run131_chain_ffn.err
el "all done"
