#!/usr/bin/env bash
# Device run 95: after the review's simplifications (one set of mode queries in _eager.py;
# attention() asks "eager, no plan, not compiling" once for both eager paths; one version
# check for bound calls; the C API's device message). Builds the CLI, the C API and
# stof_eager; every Python test; HGMMA count of the library's Hopper kernels; primitives.py
# (the eager paths' host cost); a short mha_compare through the C API against Flex (the L4096
# rows of the paper grid, CUDA graphs, as run 86) to see the C API's DeviceScope cost nothing.
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s)
D=docs/bench/2026-11-28-extension-h100
export STOF_BUILD_TARGETS="stof stof_capi"
scripts/gpu-build /tmp/b > $OUT/build.log 2>&1 || { tail -30 $OUT/build.log; exit 1; }
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so STOF_CLI=/tmp/b/app/stof PYTHONPATH=$PWD/python
echo "built at $(( $(date +%s) - t0 )) s"
echo "HGMMA in libstof_capi.so: $(cuobjdump -sass /tmp/b/kernels/libstof_capi.so | grep -c HGMMA)" | tee $OUT/run95_hgmma.txt
python3 -m stof.extension --quiet > $OUT/run95_extension_build.log 2>&1; echo "extension build rc=$?"; python3 -m stof.extension --status
PYTHONUNBUFFERED=1 timeout 150 python3 -m unittest discover -s python/tests -v > $OUT/run95_python_tests.log 2>&1; echo "python tests rc=$?"
grep -E "compiled|^(FAIL|ERROR):|^Ran|^OK|^FAILED" $OUT/run95_python_tests.log
PYTHONUNBUFFERED=1 timeout 90 python3 $D/primitives.py $OUT/run95_primitives.json | grep -v "GPU back" ; echo "primitives rc=$?"
cd tests/compare && PYTHONUNBUFFERED=1 timeout 150 python3 mha_compare.py --stof /tmp/b/app/stof --lib /tmp/b/kernels/libstof_capi.so \
  --filter '/L4096/' --ours auto --methods ours,flex --cuda-graph --time-budget 110 --out $OUT/run95_compare_l4096.json > $OUT/run95_compare_l4096.log 2>&1
echo "compare rc=$? at $(( $(date +%s) - t0 )) s"; tail -6 $OUT/run95_compare_l4096.log
