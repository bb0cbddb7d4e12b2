// CudaBackend's parameter spaces for the tuner (engine/backend.h *ParamChoices): what each
// kernel family says it runs for a call's shape, as the ParamMap names RunGemm & co. accept
// (cuda_backend_layer_ops.cpp), the family's default first:
//   GemmCall      -> "algo" 0..AlgoCount-1 (cuBLASLt's heuristic list for this shape/epilogue)
//   NormCall      -> SupportedNormParams(cols): rows_per_block, threads_per_row
//   GemmNormCall  -> SupportedGemmNormParams(n, k, smem): bm, bk, warps, stages
//   GemmChainCall -> SupportedGemmChainParams(args, smem): bm, bn, bk, bh, warps (the mhnk
//                    kernel, RunGemmChain's default); on sm_90 then HopperChainParamChoices:
//                    cluster, splits (the Hopper chain)
//   MHA           -> ChooseMhaConfig's pick, every other supported block-wise configuration
//                    (on sm_90 the Hopper form's 128x64 and 128x128 with 12 warps too), and
//                    the row-wise kernel.
// Used by the tuner (engine/tune/) through engine::Backend.
#include <algorithm>

#include "kernels/attention/block_sparse_attention.h"
#include "kernels/attention_hopper/hopper_attention.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/cuda_backend.h"
#include "kernels/cuda_backend_state.h"
#include "kernels/gemm_chain/gemm_chain.h"
#include "kernels/gemm_chain_hopper/hopper_chain.h"
#include "kernels/gemm_epilogue/lt_gemm.h"
#include "kernels/gemm_norm/gemm_norm.h"
#include "kernels/norm/norm_kernels.h"

namespace stof::kernels {

using engine::Expected;
using engine::MakeError;
using engine::ParamMap;

Expected<std::vector<ParamMap>> CudaBackend::GemmParamChoices(const engine::GemmCall& c) {
  STOF_RETURN_IF_ERROR(engine::ValidateGemmCall(c));
  auto st = Layer();
  if (!st.IsOk()) return st.ToStatus();
  GemmArgs a;
  a.m = c.m, a.n = c.n, a.k = c.k, a.a = c.a, a.w = c.w, a.bias = c.bias, a.act = c.act;
  a.residual = c.residual, a.out = c.out;
  auto n = (*st)->lt->AlgoCount(a);
  if (!n.IsOk()) return n.ToStatus().WithContext("gemm call: ");
  std::vector<ParamMap> out;
  for (int i = 0; i < *n; ++i) out.push_back(ParamMap{{"algo", i}});
  return out;
}

Expected<std::vector<ParamMap>> CudaBackend::NormParamChoices(const engine::NormCall& c) {
  std::vector<ParamMap> out;
  for (const NormParams& p : SupportedNormParams(c.cols))
    out.push_back(ParamMap{{"rows_per_block", p.rows_per_block},
                           {"threads_per_row", p.threads_per_row}});
  if (out.empty())
    return MakeError("norm call: cols: no supported parameters for " + std::to_string(c.cols));
  return out;
}

Expected<std::vector<ParamMap>> CudaBackend::GemmNormParamChoices(const engine::GemmNormCall& c) {
  std::vector<ParamMap> out;
  for (const GemmNormParams& p : SupportedGemmNormParams(c.n, c.k, m_spec.smem_per_block_bytes))
    out.push_back(ParamMap{{"bm", p.bm}, {"bk", p.bk}, {"warps", p.warps}, {"stages", p.stages}});
  if (out.empty())
    return MakeError("gemm_norm call: no supported parameters for n " + std::to_string(c.n) +
                     ", k " + std::to_string(c.k));
  return out;
}

Expected<std::vector<ParamMap>> CudaBackend::GemmChainParamChoices(
    const engine::GemmChainCall& c) {
  GemmChainArgs a;
  a.batch = c.batch, a.m = c.m, a.n = c.n, a.k = c.k, a.h = c.h;
  a.a = c.a, a.b = c.b, a.d = c.d;
  a.stride_a = c.stride_a, a.stride_b = c.stride_b, a.stride_d = c.stride_d;
  a.stride_e = c.stride_e;
  a.bias1 = c.bias1, a.act = c.act, a.bias2 = c.bias2, a.e = c.e;
  std::vector<ParamMap> out;
  for (const GemmChainParams& p : SupportedGemmChainParams(a, m_spec.smem_per_block_bytes))
    out.push_back(ParamMap{{"bm", p.bm}, {"bn", p.bn}, {"bk", p.bk}, {"bh", p.bh},
                           {"warps", p.warps}});
  if (m_spec.cc_major == 9 && m_spec.cc_minor == 0) {
    for (const HopperChainParams& p : HopperChainParamChoices(a, m_spec.sm_count))
      out.push_back(ParamMap{{"cluster", p.cluster}, {"splits", p.splits}});
  }
  if (out.empty()) return MakeError("gemm_chain call: no supported parameters for this shape");
  return out;
}

Expected<std::vector<engine::MhaConfig>> CudaBackend::MhaConfigChoices(
    const engine::Workload& w, const engine::Mask& mask) {
  auto pick = ChooseMhaConfig(mask, w, m_spec, MhaRequest{});
  if (!pick.IsOk()) return pick.ToStatus();
  engine::MhaConfig first = pick->config;
  // Row-wise ignores the block fields (ChooseMhaConfig zeroes them); ValidateMhaCall still
  // wants legal ones.
  if (first.kernel == engine::MhaKernel::kRowWise) first = {engine::MhaKernel::kRowWise, 64, 64, 4};
  std::vector<engine::MhaConfig> out{first};
  std::vector<BlockSparseConfig> blocks =
      SupportedBlockSparseConfigs(w.head_dim, m_spec.smem_per_block_bytes);
  if (m_spec.cc_major == 9 && m_spec.cc_minor == 0) {  // the Hopper form (hopper_attention.h)
    for (const BlockSparseConfig& b :
         SupportedHopperAttentionConfigs(w.head_dim, m_spec.smem_per_block_bytes))
      blocks.push_back(b);
  }
  for (const BlockSparseConfig& b : blocks) {
    engine::MhaConfig c{engine::MhaKernel::kBlockWise, b.block_m, b.block_n, b.num_warps};
    if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
  }
  if (first.kernel != engine::MhaKernel::kRowWise)
    out.push_back(engine::MhaConfig{engine::MhaKernel::kRowWise, 64, 64, 4});
  return out;
}

}  // namespace stof::kernels
