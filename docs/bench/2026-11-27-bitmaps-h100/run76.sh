#!/usr/bin/env bash
# Device run 76: validates and times the staged bitmaps (README.md here).
# The working tree holds the change (new); .devdeps/old.tar the tree without it (old).
# (1) both trees built at once; (2) the Hopper GPU tests on the new tree; (3) compute-sanitizer
# memcheck and synccheck on part-block cases of every tile (random-element masks, ragged L)
# and the split and persistent-grid tests; (4) ours only, CUDA-graph replay, old and new
# alternating, two rounds of the paper grid (96 rows). About 8 minutes; run 77 goes on with
# the same builds if the machine is still warm.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
D=docs/bench/2026-11-27-bitmaps-h100
mkdir -p /tmp/old /tmp/deps && tar -xf .devdeps/old.tar -C /tmp/old
for f in .devdeps/*.deb; do dpkg -x "$f" /tmp/deps; done
# Both trees at once, configured as scripts/gpu-build does (which would unpack the .debs
# again while the other build reads them).
build() {  # SRC DIR TARGETS...
  local src=$1 dir=$2; shift 2
  cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTOF_CUDA=ON -DSTOF_BUILD_STUDIO=OFF \
    -DCMAKE_PREFIX_PATH=/tmp/deps/usr -DCMAKE_CXX_FLAGS="-isystem /tmp/deps/usr/include" >/dev/null &&
  cmake --build "$dir" -j 16 --target "$@"
}
build /tmp/old /tmp/a stof stof_capi > /tmp/build_old.log 2>&1 & old=$!
build "$PWD" /tmp/b stof stof_capi stof_gpu_tests > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
wait $old || { tail -30 /tmp/build_old.log; exit 1; }
echo "built at $(( $(date +%s) - t0 )) s"
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
timeout 240 /tmp/b/tests/gpu/stof_gpu_tests --gtest_filter='*Hopper*' > /tmp/gpu_tests.log 2>&1; rc=$?
echo "hopper tests rc=$rc at $(( $(date +%s) - t0 )) s"
grep -E "^\[  FAILED|^\[  PASSED|tests from .* ran|HGMMA" /tmp/gpu_tests.log | head -12 | tee $OUT/gpu_tests_summary.txt
grep -B2 -A12 "Failure" /tmp/gpu_tests.log | head -60 >> $OUT/gpu_tests_summary.txt
[ $rc -eq 0 ] || exit 1
for tool in memcheck synccheck; do
  timeout 100 /usr/local/cuda/bin/compute-sanitizer --tool $tool --print-limit 5 /tmp/b/tests/gpu/stof_gpu_tests \
    --gtest_filter='Masks/GpuHopperAttention.*random_elements*L1000*:*PersistentGridMatchesReference*:*SplitBlocksMatchReference*' > /tmp/san_$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' /tmp/san_$tool.log | tr '\n' ' ')" | tee -a $OUT/sanitizer.txt
done
echo "at $(( $(date +%s) - t0 )) s"
cd tests/compare
for r in 1 2; do for t in a b; do
  PYTHONUNBUFFERED=1 timeout 60 python3 mha_compare.py --stof /tmp/$t/app/stof --lib /tmp/$t/kernels/libstof_capi.so \
    --ours auto --methods ours --cuda-graph --time-budget 50 --out $OUT/paper_${t}_r$r.json > /tmp/p$t$r.log 2>&1
  echo "paper $t r$r rc=$? at $(( $(date +%s) - t0 )) s"
done; done
cd ../..
python3 $D/ab.py $OUT paper 2 > $OUT/ab_paper.txt; tail -14 $OUT/ab_paper.txt
echo "total $(( $(date +%s) - t0 )) s"
