// Shared by the sparse-MHA GPU tests (mha_correctness_test.cpp, mha_dispatch_test.cpp): device
// buffers owned by a CudaBackend, plus the host-side checking of kernels/util/mha_check.h
// (fp16 conversion, seeded inputs, threaded reference, the error metric) under short names.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "engine/core/workload.h"
#include "engine/cpu/reference.h"
#include "engine/mask/mask.h"
#include "kernels/cuda_backend.h"
#include "kernels/util/mha_check.h"

namespace stof::testing {

using kernels::CompareMha;
using kernels::EmptyRows;
using kernels::FloatToHalf;
using kernels::HalfToFloat;
using kernels::kMhaRowFloor;
using kernels::kMhaTolerance;
using kernels::MhaError;
using kernels::MhaInputs;
using kernels::RandomInputs;
using kernels::SplitMix64;
using kernels::ThreadedReference;

// q, k, v, o on the device of a CudaBackend, freed on destruction.
class DeviceMhaBuffers {
 public:
  DeviceMhaBuffers(kernels::CudaBackend& backend, int64_t elements)
      : m_backend(backend), m_bytes(static_cast<size_t>(elements) * 2) {
    for (void*& p : m_ptr) {
      auto a = backend.Allocate(m_bytes);
      p = a.IsOk() ? *a : nullptr;
    }
  }
  ~DeviceMhaBuffers() {
    for (void* p : m_ptr) m_backend.Free(p);
  }
  DeviceMhaBuffers(const DeviceMhaBuffers&) = delete;
  DeviceMhaBuffers& operator=(const DeviceMhaBuffers&) = delete;

  bool Ok() const { return m_ptr[0] && m_ptr[1] && m_ptr[2] && m_ptr[3]; }
  engine::Status Upload(const MhaInputs& in) {
    STOF_RETURN_IF_ERROR(m_backend.CopyToDevice(m_ptr[0], in.q.data(), m_bytes));
    STOF_RETURN_IF_ERROR(m_backend.CopyToDevice(m_ptr[1], in.k.data(), m_bytes));
    return m_backend.CopyToDevice(m_ptr[2], in.v.data(), m_bytes);
  }
  void* Q() const { return m_ptr[0]; }
  void* K() const { return m_ptr[1]; }
  void* V() const { return m_ptr[2]; }
  void* O() const { return m_ptr[3]; }
  size_t Bytes() const { return m_bytes; }

 private:
  kernels::CudaBackend& m_backend;
  size_t m_bytes;
  void* m_ptr[4] = {nullptr, nullptr, nullptr, nullptr};
};

}  // namespace stof::testing
