// Shared by GPU tests: skip (with the reason) when no GPU is usable, so CI without a GPU
// reports these tests as skipped rather than failed.
#pragma once

#include <gtest/gtest.h>

#include "kernels/device_query.h"

#define STOF_REQUIRE_GPU()                                               \
  do {                                                                   \
    auto stof_count_ = ::stof::kernels::CudaDeviceCount();               \
    if (!stof_count_.IsOk()) GTEST_SKIP() << stof_count_.Message();      \
  } while (0)
