#!/usr/bin/env bash
# Device run 93 (the warm two-H100 machine of run 92): the device test can fail. The C API's
# DeviceScope restore is cut out by sed, libstof_capi.so rebuilt, and
# test_current_device_is_left_alone run against it (expected to fail: 1 != 0), then against the
# library of run 92 (saved as /tmp/fixed.so before the rebuild; expected to pass).
cp /tmp/b/kernels/libstof_capi.so /tmp/fixed.so
sed -i 's/    if (m_switched) (void)cudaSetDevice(m_caller);/    \/\/ restore disabled for this check/' kernels/capi/stof_capi.cpp && grep -n "restore disabled" kernels/capi/stof_capi.cpp && export STOF_BUILD_TARGETS="stof_capi" && scripts/gpu-build /tmp/b > /tmp/rebuild.log 2>&1; tail -2 /tmp/rebuild.log
export LD_LIBRARY_PATH=/tmp/deps/usr/lib/x86_64-linux-gnu STOF_CAPI_LIB=/tmp/b/kernels/libstof_capi.so PYTHONPATH=$PWD/python
cd python/tests && python3 -m unittest test_gpu_attention.AttentionTest.test_current_device_is_left_alone 2>&1 | tail -8
STOF_CAPI_LIB=/tmp/fixed.so python3 -m unittest test_gpu_attention.AttentionTest.test_current_device_is_left_alone 2>&1 | tail -3
