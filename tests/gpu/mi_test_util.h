// Shared by the memory-intensive kernel tests (norm_kernels_test.cpp,
// elementwise_kernels_test.cpp), besides device_buffer.h (their device buffers, seeded fp16
// inputs and the element-wise comparison against the CPU reference) and mha_test_util.h (the
// test masks): pointers for the bad-input tests, which run with or without a GPU (the
// arguments are refused on the host before any device work), and a check that an error names
// the op and the field.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>

#include "device_buffer.h"
#include "engine/core/status.h"
#include "kernels/device_query.h"
#include "mha_test_util.h"

namespace stof::testing {

inline bool HasGpu() { return kernels::CudaDeviceCount().IsOk() && SharedBackend() != nullptr; }

// Pointers for bad-input tests: real device buffers when a GPU is there (so an argument the
// host check wrongly let through runs on valid memory instead of faulting the context), else
// distinct 256-byte-aligned fake addresses that are never dereferenced: the launch functions
// must refuse the arguments before any CUDA call.
class ArgPointers {
 public:
  explicit ArgPointers(size_t bytes_each = 1 << 20) {
    for (int i = 0; i < kCount; ++i) {
      if (HasGpu()) {
        m_bufs[i] = std::make_unique<DeviceBuffer>(bytes_each);
        m_ptrs[i] = m_bufs[i]->Ptr();
      } else {
        m_ptrs[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(0x100000) * (i + 1));
      }
    }
  }
  void* operator[](int i) const { return m_ptrs[i]; }
  static constexpr int kCount = 8;

 private:
  std::unique_ptr<DeviceBuffer> m_bufs[kCount];
  void* m_ptrs[kCount] = {};
};

inline bool MessageHas(const engine::Status& s, const std::string& part) {
  return !s.IsOk() && s.Message().find(part) != std::string::npos;
}

// Expects `s` to fail with a message containing every part (the op name and the field).
#define STOF_EXPECT_ERROR_NAMES(status_expr, ...)                                 \
  do {                                                                            \
    const ::stof::engine::Status stof_s_ = (status_expr);                         \
    EXPECT_FALSE(stof_s_.IsOk()) << #status_expr << ": expected an error";         \
    for (const char* stof_part_ : {__VA_ARGS__})                                  \
      EXPECT_TRUE(::stof::testing::MessageHas(stof_s_, stof_part_))               \
          << #status_expr << ": message '" << stof_s_.Message() << "' should name '" \
          << stof_part_ << "'";                                                   \
  } while (0)

}  // namespace stof::testing
