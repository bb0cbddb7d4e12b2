// The softmax recomposition rungs' names and tunable parameters (SD: softmax decomposition, SDF:
// decomposition + fusion; docs/kernels.md): plain data shared by the MHA choice
// (engine/select/mha_choice.h) and the kernels that run them
// (kernels/recomposition/recomposed_attention.h).
#pragma once

namespace stof::engine {

enum class RecomposeVariant { kDecomposed, kRecomposed };  // SD, SDF
const char* RecomposeVariantName(RecomposeVariant v);      // "sd", "sdf"

// The tunable parameters. sub_len (T) is the sub-vector length of the decomposition, which is
// also the N tile of the SDF Q K^T kernel and the K tile of its P V kernel; block_m (BM) is
// the query rows of one tile (SDF: one warp per 16 rows; SD: rows per LS/GS thread block).
struct RecomposeParams {
  int sub_len = 64;   // T: 64 or 128
  int block_m = 64;   // BM: 64 or 128
  bool operator==(const RecomposeParams&) const = default;
};

}  // namespace stof::engine
