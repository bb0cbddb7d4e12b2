// Shared by the memory-intensive kernel tests (norm_kernels_test.cpp,
// elementwise_kernels_test.cpp): seeded fp16 inputs with their exact fp32 values, device
// buffers owned by the shared CudaBackend (mha_test_util.h), an element-wise comparison against
// the fp32/double CPU reference, and pointers for the bad-input tests, which run with or without
// a GPU (the arguments are refused on the host before any device work).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "kernels/device_query.h"
#include "kernels/util/finite_check.h"
#include "kernels/util/mha_check.h"
#include "mha_test_util.h"

namespace stof::testing {

// n values uniform in [lo, hi) rounded to fp16 (seeded); f holds the rounded values, so the
// reference sees exactly what the kernel sees. Never all zeros.
struct HalfVec {
  std::vector<uint16_t> bits;
  std::vector<float> f;
  size_t Bytes() const { return bits.size() * 2; }
};

inline HalfVec RandomHalfVec(int64_t n, uint64_t seed, float lo, float hi) {
  HalfVec v;
  v.bits.resize(static_cast<size_t>(n));
  v.f.resize(static_cast<size_t>(n));
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 12345;
  for (size_t i = 0; i < v.bits.size(); ++i) {
    const double u = static_cast<double>(kernels::SplitMix64(state) >> 11) * 0x1.0p-53;
    v.bits[i] = kernels::FloatToHalf(static_cast<float>(lo + (hi - lo) * u));
    v.f[i] = kernels::HalfToFloat(v.bits[i]);
  }
  return v;
}

inline HalfVec FromBits(std::vector<uint16_t> bits) {
  HalfVec v;
  v.bits = std::move(bits);
  v.f.resize(v.bits.size());
  for (size_t i = 0; i < v.bits.size(); ++i) v.f[i] = kernels::HalfToFloat(v.bits[i]);
  return v;
}

// A device buffer of `bytes` on the shared backend, freed on destruction. Ok() is false when
// the allocation failed (the test asserts on it).
class DeviceBuf {
 public:
  explicit DeviceBuf(size_t bytes) : m_bytes(std::max<size_t>(bytes, 16)) {
    if (kernels::CudaBackend* b = SharedBackend()) {
      auto a = b->Allocate(m_bytes);
      if (a.IsOk()) m_ptr = *a;
    }
  }
  ~DeviceBuf() {
    if (m_ptr) SharedBackend()->Free(m_ptr);
  }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;

  bool Ok() const { return m_ptr != nullptr; }
  void* Ptr() const { return m_ptr; }
  // Byte offset into the buffer (for unaligned views: the scalar paths).
  void* At(size_t byte_offset) const { return static_cast<char*>(m_ptr) + byte_offset; }
  size_t Bytes() const { return m_bytes; }

  engine::Status Upload(const void* host, size_t bytes, size_t byte_offset = 0) const {
    return SharedBackend()->CopyToDevice(At(byte_offset), host, bytes);
  }
  engine::Status Upload(const HalfVec& v, size_t byte_offset = 0) const {
    return Upload(v.bits.data(), v.Bytes(), byte_offset);
  }
  engine::Status Poison() const { return kernels::PoisonBuffer(m_ptr, m_bytes); }
  // n halves from byte_offset (synchronises the device first).
  engine::Expected<std::vector<uint16_t>> Download(int64_t n, size_t byte_offset = 0) const {
    STOF_RETURN_IF_ERROR(SharedBackend()->Synchronize());
    std::vector<uint16_t> h(static_cast<size_t>(n));
    STOF_RETURN_IF_ERROR(SharedBackend()->CopyToHost(h.data(), At(byte_offset), h.size() * 2));
    return h;
  }

 private:
  size_t m_bytes;
  void* m_ptr = nullptr;
};

// Worst element of |out - ref| / (rel |ref| + abs): <= 1 passes. NaN/inf in out counts as a
// failure (ratio inf) and is counted separately.
struct HalfDiff {
  double ratio = 0;
  int64_t at = -1;
  float out = 0, ref = 0;
  int64_t nonfinite = 0;
};

inline HalfDiff CompareHalves(const std::vector<uint16_t>& out, const std::vector<float>& ref,
                              double rel, double abs) {
  HalfDiff d;
  for (size_t i = 0; i < out.size(); ++i) {
    const double o = kernels::HalfToFloat(out[i]);
    double ratio;
    if (!std::isfinite(o)) {
      ++d.nonfinite;
      ratio = INFINITY;
    } else {
      ratio = std::fabs(o - ref[i]) / (rel * std::fabs(static_cast<double>(ref[i])) + abs);
    }
    if (!(ratio <= d.ratio)) {
      d.ratio = ratio;
      d.at = static_cast<int64_t>(i);
      d.out = static_cast<float>(o);
      d.ref = ref[i];
    }
  }
  return d;
}

// gtest check of a HalfDiff, with the worst element's row and column in the message.
inline void ExpectClose(const HalfDiff& d, int64_t cols, const std::string& label) {
  EXPECT_EQ(d.nonfinite, 0) << label << ": NaN/inf or unwritten (poisoned) outputs";
  EXPECT_LE(d.ratio, 1.0) << label << ": worst element row " << (cols ? d.at / cols : 0)
                          << " col " << (cols ? d.at % cols : d.at) << ": out " << d.out
                          << " ref " << d.ref << " (error / tolerance = " << d.ratio << ")";
}

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
        m_bufs[i] = std::make_unique<DeviceBuf>(bytes_each);
        m_ptrs[i] = m_bufs[i]->Ptr();
      } else {
        m_ptrs[i] = reinterpret_cast<void*>(static_cast<uintptr_t>(0x100000) * (i + 1));
      }
    }
  }
  void* operator[](int i) const { return m_ptrs[i]; }
  static constexpr int kCount = 8;

 private:
  std::unique_ptr<DeviceBuf> m_bufs[kCount];
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
