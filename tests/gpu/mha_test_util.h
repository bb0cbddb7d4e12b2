// Shared by the MHA GPU tests (mha_correctness_test.cpp, mha_dispatch_test.cpp,
// mha_choice_test.cpp, mha_native_test.cpp, recomposed_attention_test.cpp,
// hopper_attention_test.cpp): the test masks by name, an fp16 workload by shape, q, k, v and o
// on the device (DeviceMhaBuffers, over device_buffer.h), one poisoned run checked against the
// reference, the launch refusals every prepared plan shares, plus the host-side checking of
// kernels/util/mha_check.h (seeded inputs, threaded reference, the error metric) under short
// names.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "device_buffer.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "kernels/attention_hopper/hopper_attention.h"
#include "kernels/cuda_backend.h"
#include "kernels/util/finite_check.h"
#include "kernels/util/mha_check.h"

// Skips the test, saying why, unless the current device runs the Hopper kernel (sm_90).
#define STOF_REQUIRE_HOPPER()                                                           \
  do {                                                                                  \
    STOF_REQUIRE_GPU();                                                                 \
    auto stof_dev_ = ::stof::kernels::CheckHopperDevice();                              \
    if (!stof_dev_.IsOk()) GTEST_SKIP() << "SKIPPED: " << stof_dev_.Message();          \
  } while (0)

namespace stof::testing {

using kernels::CompareMha;
using kernels::EmptyRows;
using kernels::kMhaRowFloor;
using kernels::kMhaTolerance;
using kernels::MhaError;
using kernels::MhaInputs;
using kernels::RandomInputs;
using kernels::SplitMix64;
using kernels::ThreadedReference;

// Each element attended with probability p (seeded): scattered columns, and at small L rows
// with nothing attended.
inline engine::Expected<engine::Mask> RandomElements(int64_t L, double p, uint64_t seed) {
  auto m = engine::Mask::Create(L, L, "random_elements");
  if (!m.IsOk()) return m;
  uint64_t state = seed;
  const auto threshold = static_cast<uint64_t>(p * 18446744073709551616.0);
  for (int64_t i = 0; i < L; ++i)
    for (int64_t j = 0; j < L; ++j)
      if (SplitMix64(state) < threshold) m->Set(i, j);
  return m;
}

// The test masks: the generators' patterns (sliding_window, dilated, longformer, bigbird,
// causal) at their defaults, document (three documents of L/5, L/2 and the rest),
// random_blocks (fill 0.2, block 24: a size that straddles every block grid), random_elements
// (p = 0.02) and holes (Longformer with row 3, rows L/2 .. L/2+39 and the last row emptied).
inline engine::Expected<engine::Mask> MakeMask(const std::string& name, int64_t L) {
  engine::MaskSpec s;
  s.seq_len = L;
  if (name == "random_elements") return RandomElements(L, 0.02, 11);
  if (name == "holes") {
    // A single row, a run of 40 rows (covering at least one whole 16-row block row, so the
    // block kernel's "no valid block" path runs at BLOCK_M 16 and 32) and the last row.
    s.pattern = "longformer";
    auto m = engine::Generate(s);
    if (!m.IsOk()) return m;
    auto clear = [&](int64_t r) {
      if (r >= 0 && r < L) m->SetRange(r, 0, L, false);
    };
    clear(3);
    for (int64_t r = L / 2; r < L / 2 + 40; ++r) clear(r);
    clear(L - 1);
    return m;
  }
  s.pattern = name;
  if (name == "bigbird") s.seed = 1;
  if (name == "document") s.doc_lengths = {L / 5, L / 2, L - L / 5 - L / 2};
  if (name == "random_blocks") {
    s.fill = 0.2;
    s.block = std::min<int64_t>(24, L);
    s.seed = 3;
  }
  return engine::Generate(s);
}

// An fp16 workload of B x H heads of L x d (Workload's fields are batch, seq_len, heads,
// head_dim, dtype).
inline engine::Workload MhaWorkload(int64_t batch, int64_t heads, int64_t seq_len,
                                    int64_t head_dim) {
  return engine::Workload{batch, seq_len, heads, head_dim, engine::DType::kF16};
}

// q, k, v, o of `elements` fp16 values each on the device of a CudaBackend, freed on
// destruction.
class DeviceMhaBuffers {
 public:
  // kv_elements >= 0: k and v of another size than q and o (grouped heads, L_q != L_k).
  DeviceMhaBuffers(kernels::CudaBackend& backend, int64_t elements, int64_t kv_elements = -1)
      : m_bytes(static_cast<size_t>(elements) * 2),
        m_q(m_bytes, &backend),
        m_k(static_cast<size_t>(kv_elements >= 0 ? kv_elements : elements) * 2, &backend),
        m_v(static_cast<size_t>(kv_elements >= 0 ? kv_elements : elements) * 2, &backend),
        m_o(m_bytes, &backend) {}

  bool Ok() const { return m_q.Ok() && m_k.Ok() && m_v.Ok() && m_o.Ok(); }
  engine::Status Upload(const MhaInputs& in) {
    STOF_RETURN_IF_ERROR(m_q.Upload(in.q));
    STOF_RETURN_IF_ERROR(m_k.Upload(in.k));
    return m_v.Upload(in.v);
  }
  void* Q() const { return m_q.Ptr(); }
  void* K() const { return m_k.Ptr(); }
  void* V() const { return m_v.Ptr(); }
  void* O() const { return m_o.Ptr(); }
  size_t Bytes() const { return m_bytes; }

 private:
  size_t m_bytes;
  DeviceBuffer m_q, m_k, m_v, m_o;
};

// Seeded inputs of `w` (its element type; q [B, H, L_q, d], k and v [B, H_kv, L_k, d]) on the
// device, their fp32 reference on `mask` and its empty rows: what a checked run needs. `ok` is
// false when the reference or the upload failed.
struct CheckedMhaCase {
  CheckedMhaCase(kernels::CudaBackend& backend, const engine::Mask& mask,
                 const engine::Workload& w, uint64_t seed)
      : in(RandomInputs(kernels::QueryElements(w), seed, w.dtype, kernels::KeyElements(w))),
        empty_row(EmptyRows(mask)),
        buf(backend, kernels::QueryElements(w), kernels::KeyElements(w)) {
    ok = ThreadedReference(in, w, mask, ref).IsOk() && buf.Ok() && buf.Upload(in).IsOk();
  }
  MhaInputs in;
  std::vector<float> ref;
  std::vector<uint8_t> empty_row;
  DeviceMhaBuffers buf;
  bool ok = false;
};

// A parameterised case of the MHA correctness matrices, printed and named readably in gtest and
// ctest output ("bigbird_L1024_d64") instead of as the struct's bytes.
struct MhaCase {
  std::string mask;
  int64_t seq_len;
  int64_t head_dim;
};

inline void PrintTo(const MhaCase& c, std::ostream* os) {
  *os << c.mask << " L=" << c.seq_len << " d=" << c.head_dim;
}

inline std::string MhaCaseName(const MhaCase& c) {
  return c.mask + "_L" + std::to_string(c.seq_len) + "_d" + std::to_string(c.head_dim);
}

inline std::string MhaCaseParamName(const ::testing::TestParamInfo<MhaCase>& info) {
  return MhaCaseName(info.param);
}

// One checked run: O poisoned (NaN), `launch` enqueued and synchronised, then no non-finite
// element (every one written, nothing NaN), the per-row error against `ref` below
// MhaTolerance(w.dtype) and rows with nothing attended exactly zero. `error` receives the metric.
inline void CheckMhaRun(kernels::CudaBackend& backend, const DeviceMhaBuffers& buf,
                        const std::function<engine::Status()>& launch,
                        const std::vector<float>& ref, const engine::Workload& w,
                        const std::vector<uint8_t>& empty_row, MhaError* error) {
  const int64_t elements = kernels::QueryElements(w);
  ASSERT_TRUE(kernels::PoisonBuffer(buf.O(), buf.Bytes()).IsOk());
  auto run = launch();
  ASSERT_TRUE(run.IsOk()) << run.Message();
  auto sync = backend.Synchronize();
  ASSERT_TRUE(sync.IsOk()) << sync.Message();
  auto bad = kernels::CountNonFinite(buf.O(), elements, w.dtype);
  ASSERT_TRUE(bad.IsOk()) << bad.Message();
  EXPECT_EQ(*bad, 0) << "non-finite or unwritten outputs";
  std::vector<uint16_t> out(static_cast<size_t>(elements));
  ASSERT_TRUE(backend.CopyToHost(out.data(), buf.O(), out.size() * 2).IsOk());
  const MhaError e = CompareMha(out, ref, w, empty_row);
  EXPECT_LT(e.row_err, kernels::MhaTolerance(w.dtype))
      << "worst row " << e.worst_row << " (query " << e.worst_row % w.QLen() << ", bh "
      << e.worst_row / w.QLen() << ") col " << e.worst_col << ": out " << e.worst_out << " ref "
      << e.worst_ref << "; global error " << e.global_err;
  EXPECT_EQ(e.nonzero_empty_rows, 0) << "rows with nothing attended must be exactly zero";
  if (error) *error = e;
}

// A plan (PreparedMha, NativeMha, RecomposedMha) prepared for fewer batch x heads than `more`
// refuses to launch it, naming its workspace, before it looks at a pointer.
template <class Plan>
void ExpectRefusesMoreHeads(const Plan& plan, const engine::Workload& more) {
  auto s = plan.Launch(more, nullptr, nullptr, nullptr, nullptr, nullptr);
  EXPECT_FALSE(s.IsOk()) << "a launch with more heads than prepared was accepted";
  EXPECT_NE(s.Message().find("workspace"), std::string::npos) << s.Message();
}

// The launch refusals every plan shares, on a plan prepared for `w` with buffers of w's size:
// half w's sequence length (the message names the prepared L), twice its head_dim, a null q.
template <class Plan>
void ExpectLaunchRefusals(const Plan& plan, const engine::Workload& w,
                          const DeviceMhaBuffers& buf) {
  engine::Workload shorter = w;
  shorter.seq_len = w.seq_len / 2;
  auto l = plan.Launch(shorter, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr);
  EXPECT_FALSE(l.IsOk()) << "another L was accepted";
  EXPECT_NE(l.Message().find("L = " + std::to_string(w.seq_len)), std::string::npos)
      << l.Message();
  engine::Workload wider = w;
  wider.head_dim = w.head_dim * 2;
  EXPECT_FALSE(plan.Launch(wider, buf.Q(), buf.K(), buf.V(), buf.O(), nullptr).IsOk())
      << "another head_dim was accepted";
  auto null = plan.Launch(w, nullptr, buf.K(), buf.V(), buf.O(), nullptr);
  EXPECT_FALSE(null.IsOk()) << "a null q was accepted";
  EXPECT_NE(null.Message().find("null"), std::string::npos) << null.Message();
}

}  // namespace stof::testing
