// Choosing one sparse MHA configuration, as engine logic: ChooseMhaConfig applies STOF Eq. 1 /
// Eq. 2 (SelectKernel) restricted to what the kernels report they can run
// (MhaKernelCapabilities: kernels/attention/mha_choice.h implements it with the kernels' own
// checks in a CUDA build, engine/select/model_capabilities.h models them for a build without
// kernels), prefers the Hopper kernel's tile where its model estimates it faster
// (hopper_select.h), sends the shapes only the Hopper kernel serves there, or checks the
// caller's overrides. The unfused "native" baseline and softmax recomposition "sd" / "sdf" run
// only on request. Used through kernels::ChooseMhaConfig by PreparedMha, `stof bench mha`, the
// C API; with either capabilities object by what runs (engine/analysis/mha_run.h: `stof
// select`, the studio's views, plans) and the ladder's default fused rung (engine/tune/ladder.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/backend.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/mask/gqa_pack.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_set.h"
#include "engine/select/kernel_select.h"
#include "engine/select/recompose_params.h"

namespace stof::engine {

// What the attention kernels of a build can run, reported by kernels/ (the engine has no
// CUDA), or the engine's model of it for a build without them (ModelMhaCapabilities,
// model_capabilities.h): each check is the kernel's own rule, its message naming the field.
class MhaKernelCapabilities {
 public:
  virtual ~MhaKernelCapabilities() = default;
  // The block-wise kernel (the mma.sync kernels; num_warps 5 or 12: the Hopper kernel).
  virtual Status CheckBlockWise(int64_t head_dim, int64_t block_m, int64_t block_n,
                                int64_t num_warps, int64_t smem_limit_bytes) const = 0;
  // The block-wise configurations automatic choices prefer (measured fastest).
  virtual bool PreferredBlockWise(int64_t head_dim, int64_t block_m, int64_t block_n,
                                  int64_t num_warps, int64_t smem_limit_bytes) const = 0;
  // The supported block-wise configurations, for a message.
  virtual std::string DescribeBlockWise(int64_t head_dim, int64_t smem_limit_bytes) const = 0;
  // The Hopper kernel (num_warps 5 or 12).
  virtual Status CheckHopper(int64_t head_dim, int64_t block_m, int64_t block_n,
                             int64_t num_warps, int64_t smem_limit_bytes) const = 0;
  // SD and SDF.
  virtual Status CheckRecompose(const RecomposeParams& p, int64_t head_dim, RecomposeVariant v,
                                int64_t smem_limit_bytes) const = 0;
};

// What the caller asked for: a kernel (or Eq. 1) and, for the block-wise kernel, any of
// BLOCK_M x BLOCK_N and num_warps (0 = let Eq. 2 choose). kNative is the unfused baseline
// (kernels/attention/native_attention.h): only ever run on request; MhaKernel (Eq. 1's
// choice) does not know it. kDecomposed / kRecomposed are the softmax recomposition rungs SD
// and SDF (kernels/recomposition/recomposed_attention.h), also only on request; their BM x T
// come from block_m x block_n.
enum class MhaKernelRequest { kAuto, kRowWise, kBlockWise, kNative, kDecomposed, kRecomposed };
// "auto", "row_wise", "block_wise", "native", "sd", "sdf"
const char* MhaKernelRequestName(MhaKernelRequest r);
// "auto", "native", "sd", "sdf", or any spelling ParseMhaKernel accepts ("row_wise",
// "block", ...).
Expected<MhaKernelRequest> ParseMhaKernelRequest(const std::string& s);

struct MhaRequest {
  MhaKernelRequest kernel = MhaKernelRequest::kAuto;
  int64_t block_m = 0, block_n = 0;  // both 0 or both set; sd/sdf: BM x T (0: 64 x 64)
  int64_t num_warps = 0;             // ignored by sd/sdf (one warp per 16 rows)
};

// The configuration that will run and why.
struct MhaChoice {
  bool native = false;               // the unfused baseline runs; `config` then holds Eq. 1's
                                     // kernel for information and 0 block-wise fields
  bool recompose = false;            // SD or SDF runs (recompose_variant, recompose_params);
                                     // `config` as for native
  MhaConfig config;          // kernel, BLOCK_M, BLOCK_N, num_warps (block-wise fields
                                     // are 0 for the row-wise kernel)
  KernelSelection selection; // Eq. 1 and Eq. 2 with every intermediate value
  std::string kernel_source;         // "eq1" or "user"
  std::string params_source;         // "eq2", "eq2 (preferred set)", "eq2 (supported
                                     // fallback)", "user", "user + eq2"
                                     // or "-" (row-wise, native)
  bool fell_back = false;            // Eq. 2's pick was not used (not preferred or not
                                     // supported; the note says which)
  // The mma.sync kernels' configuration (row-wise, or block-wise with 1-8 warps) that Eq. 1 /
  // Eq. 2 within the capabilities gave, before the Hopper tile model replaced it (sm_90, bf16);
  // equal to `config` where nothing replaced it. Empty where no such configuration was chosen:
  // the baselines, a Hopper configuration the caller fixed, the shapes only the Hopper kernel
  // serves. The ladder's fully fused rung (engine/tune/ladder.h) is this kernel.
  std::optional<MhaConfig> portable;
  int64_t eq2_pick_block_m = 0, eq2_pick_block_n = 0, eq2_pick_num_warps = 0;
  double score = 0;                  // Eq. 2 score of the configuration used (block-wise)
  std::string note;                  // one line on a fallback or an ignored option; else empty
  RecomposeVariant recompose_variant = RecomposeVariant::kDecomposed;  // when recompose
  RecomposeParams recompose_params;                                    // when recompose
  // Hopper kernel: whether a tile holds the rows of several query heads that share a key/value
  // head (engine/mask/gqa_pack.h; grouped shapes with short queries), else unpacked.
  GqaPacking packing;
};

// "native", "sd", "sdf", "row_wise" or "block_wise": what a choice runs.
const char* MhaChoiceKernelName(const MhaChoice& c);

// Eq. 1 decides the kernel when request.kernel is kAuto. For the block-wise kernel, Eq. 2's
// candidates that match the fixed fields of `request` are taken best score first (ties keep
// Eq. 2's order). Without overrides the first in the kernel's preferred set
// (caps.PreferredBlockWise) is used; with a fixed field, or if nothing preferred fits,
// the first that caps.CheckBlockWise accepts with device.smem_per_block_bytes. If that is
// not Eq. 2's own pick, fell_back is set and the note says why the pick was not used. When
// every field is fixed, an unsupported combination is an error with caps.CheckBlockWise's
// message. BLOCK/warp fields given with
// the row-wise kernel or kNative are ignored and the note says so. kNative runs Eq. 1 / Eq. 2
// for information only (selection) and sets `native`; kDecomposed / kRecomposed likewise set
// `recompose` with BM x T = request.block_m x block_n (64 x 64 when not given), refused with
// caps.CheckRecompose's message (device.smem_per_block_bytes) when unsupported; num_warps is
// ignored (noted). A grouped shape (GQA / MQA heads, q_len != seq_len: Workload::IsSquareMha
// false) or a head_dim other than 64 and 128 runs on the Hopper kernel only (sm_90; head sizes:
// HopperKernelHeadDim): its tile model picks the configuration and the packing; any
// other kernel request is refused with the reason. Fails on a bad workload (dtype f16 or bf16)
// or a mask that is not q_len x seq_len.
Expected<MhaChoice> ChooseMhaConfig(const Mask& mask, const Workload& workload,
                                    const DeviceSpec& device, const MhaRequest& request,
                                    const MhaKernelCapabilities& caps);

// Masks per batch row / head (engine/mask/mask_set.h; `set` is workload.batch x heads of
// q_len x seq_len patterns) run on the Hopper kernel only: its tile model chooses on the union
// of the patterns as for a grouped shape, and the group's heads share a tile (packed GQA) only
// where they share a pattern. Any other kernel request, or a set of another size, is refused
// naming the field.
Expected<MhaChoice> ChooseMhaConfigForPatterns(const MaskSet& set, const Workload& workload,
                                               const DeviceSpec& device,
                                               const MhaRequest& request,
                                               const MhaKernelCapabilities& caps);

}  // namespace stof::engine
