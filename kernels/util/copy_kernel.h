// The built-in vectorised copy: the calibration workload of the profiler (`stof profile copy`,
// the GPU profiler tests). A copy of N bytes must read N and write N bytes of DRAM when N is
// well above the L2 size, so CUPTI's dram__bytes_read/write counters can be checked against
// a known answer, and its time against the device's bandwidth. CUDA-free header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "engine/core/status.h"

namespace stof::kernels {

// Copies `bytes` from `src` to `dst` (device pointers, not overlapping) on `stream` (opaque
// cudaStream_t). 16-byte loads and stores in a grid-stride loop when both pointers are 16-byte
// aligned (cudaMalloc's are), with the tail done bytewise; a single bytewise loop otherwise.
// Validates on the host: null pointers with bytes > 0, or overlapping ranges, are errors.
engine::Status LaunchCopy(void* dst, const void* src, size_t bytes, void* stream = nullptr);

// The copy as a re-runnable workload for the profiler: owns `bytes` of source (filled with a
// position-dependent pattern, never zeros) and destination (poisoned with 0xFF) on the
// current device. Run copies; Verify counts destination bytes that differ from the pattern.
class CopyWorkload {
 public:
  static engine::Expected<std::unique_ptr<CopyWorkload>> Create(size_t bytes);
  ~CopyWorkload();
  CopyWorkload(const CopyWorkload&) = delete;
  CopyWorkload& operator=(const CopyWorkload&) = delete;

  engine::Status Run(void* stream) const { return LaunchCopy(m_dst, m_src, m_bytes, stream); }
  engine::Status Poison(void* stream = nullptr) const;  // destination := 0xFF
  engine::Expected<int64_t> Verify() const;             // mismatching bytes (0 = correct)
  size_t Bytes() const { return m_bytes; }
  double MinBytes() const { return 2.0 * static_cast<double>(m_bytes); }  // read + write

 private:
  CopyWorkload() = default;
  size_t m_bytes = 0;
  void* m_src = nullptr;
  void* m_dst = nullptr;
};

}  // namespace stof::kernels
