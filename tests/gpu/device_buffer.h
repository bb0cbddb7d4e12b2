// The GPU tests' one device buffer and the fp16 data that goes through it:
// - SharedBackend(): one CudaBackend per test binary (null when no GPU is usable);
// - DeviceBuffer: device memory owned by a CudaBackend (the shared one unless told), freed on
//   destruction, with upload, poison (all bits set: NaN) and download;
// - HalfVec and RandomHalves / RandomBits / RandomHalfVec: seeded fp16 values with their exact
//   fp32 copies, so a reference sees exactly what a kernel reads;
// - CompareHalves / ExpectClose: fp16 output against an fp32 reference, element by element.
// Every test in tests/gpu that needs device memory uses DeviceBuffer, directly or through
// DeviceMhaBuffers (mha_test_util.h) and ArgPointers (mi_test_util.h).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/status.h"
#include "kernels/cuda_backend.h"
#include "kernels/util/finite_check.h"
#include "kernels/util/mha_check.h"

namespace stof::testing {

using kernels::FloatToHalf;
using kernels::HalfToFloat;

// One backend for the whole binary (so its layout cache is exercised across tests too); null
// when no GPU is usable.
inline kernels::CudaBackend* SharedBackend() {
  static std::unique_ptr<kernels::CudaBackend> backend = [] {
    auto b = kernels::CudaBackend::Create(0);
    return b.IsOk() ? std::move(*b) : nullptr;
  }();
  return backend.get();
}

// ---- seeded fp16 data -------------------------------------------------------------------------

// fp16 values and their exact fp32 values.
struct HalfVec {
  std::vector<uint16_t> bits;
  std::vector<float> f;
  size_t Bytes() const { return bits.size() * 2; }
};

inline HalfVec FromBits(std::vector<uint16_t> bits) {
  HalfVec v;
  v.bits = std::move(bits);
  v.f.resize(v.bits.size());
  for (size_t i = 0; i < v.bits.size(); ++i) v.f[i] = HalfToFloat(v.bits[i]);
  return v;
}

// One draw uniform in [0, 1) (53 bits) from a SplitMix64 stream.
inline double Uniform01(uint64_t& state) {
  return static_cast<double>(kernels::SplitMix64(state) >> 11) * 0x1.0p-53;
}

// n fp16 values, each value(u) rounded to fp16 for a fresh draw u of Uniform01(state); the
// stream goes on in `state`, so consecutive calls fill consecutive inputs of one problem.
template <class ValueOfU>
std::vector<uint16_t> RandomBits(int64_t n, uint64_t& state, ValueOfU value) {
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  for (uint16_t& b : bits) b = FloatToHalf(static_cast<float>(value(Uniform01(state))));
  return bits;
}

template <class ValueOfU>
HalfVec RandomHalves(int64_t n, uint64_t& state, ValueOfU value) {
  return FromBits(RandomBits(n, state, value));
}

// n values uniform in [lo, hi) rounded to fp16, from a stream of its own (seeded).
inline HalfVec RandomHalfVec(int64_t n, uint64_t seed, float lo, float hi) {
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 12345;
  return RandomHalves(n, state, [lo, hi](double u) { return lo + (hi - lo) * u; });
}

// ---- device memory ----------------------------------------------------------------------------

// `bytes` of device memory on `backend` (at least 16, since a backend refuses 0: an unused
// optional input still gets a valid pointer), freed on destruction. Ok() is false when there
// is no backend or the allocation failed (the test asserts on it).
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes, kernels::CudaBackend* backend = SharedBackend())
      : m_backend(backend), m_bytes(std::max<size_t>(bytes, 16)) {
    if (m_backend == nullptr) return;
    auto a = m_backend->Allocate(m_bytes);
    if (a.IsOk()) m_ptr = *a;
  }
  ~DeviceBuffer() {
    if (m_ptr) m_backend->Free(m_ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  bool Ok() const { return m_ptr != nullptr; }
  void* Ptr() const { return m_ptr; }
  // Byte offset into the buffer (for unaligned views: the scalar paths).
  void* At(size_t byte_offset) const { return static_cast<char*>(m_ptr) + byte_offset; }
  size_t Bytes() const { return m_bytes; }

  engine::Status Upload(const void* host, size_t bytes, size_t byte_offset = 0) const {
    if (!Ok()) return engine::MakeError("device buffer: upload: not allocated");
    return m_backend->CopyToDevice(At(byte_offset), host, bytes);
  }
  engine::Status Upload(const std::vector<uint16_t>& bits, size_t byte_offset = 0) const {
    return Upload(bits.data(), bits.size() * 2, byte_offset);
  }
  engine::Status Upload(const HalfVec& v, size_t byte_offset = 0) const {
    return Upload(v.bits, byte_offset);
  }
  // Every byte 0xFF: NaN in fp16, bf16 and fp32.
  engine::Status Poison() const { return kernels::PoisonBuffer(m_ptr, m_bytes); }
  engine::Status CopyToHost(void* host, size_t bytes, size_t byte_offset = 0) const {
    if (!Ok()) return engine::MakeError("device buffer: copy to host: not allocated");
    return m_backend->CopyToHost(host, At(byte_offset), bytes);
  }
  // n halves from byte_offset (synchronises the device first).
  engine::Expected<std::vector<uint16_t>> Download(int64_t n, size_t byte_offset = 0) const {
    if (!Ok()) return engine::MakeError("device buffer: download: not allocated");
    STOF_RETURN_IF_ERROR(m_backend->Synchronize());
    std::vector<uint16_t> h(static_cast<size_t>(n));
    STOF_RETURN_IF_ERROR(CopyToHost(h.data(), h.size() * 2, byte_offset));
    return h;
  }

 private:
  kernels::CudaBackend* m_backend;
  size_t m_bytes;
  void* m_ptr = nullptr;
};

// ---- comparing with a reference ---------------------------------------------------------------

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
    const double o = HalfToFloat(out[i]);
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

// gtest check of a HalfDiff, with the worst element's row and column in the message. `rows`,
// when given, names the output row each compared row of `cols` elements stands for (a
// sample of the rows).
inline void ExpectClose(const HalfDiff& d, int64_t cols, const std::string& label,
                        const std::vector<int64_t>& rows = {}) {
  const int64_t row = cols && d.at >= 0 ? d.at / cols : 0;
  EXPECT_EQ(d.nonfinite, 0) << label << ": NaN/inf or unwritten (poisoned) outputs";
  EXPECT_LE(d.ratio, 1.0) << label << ": worst element row "
                          << (rows.empty() ? row : rows[static_cast<size_t>(row)]) << " col "
                          << (cols ? d.at % cols : d.at) << ": out " << d.out << " ref "
                          << d.ref << " (error / tolerance = " << d.ratio << ")";
}

}  // namespace stof::testing
