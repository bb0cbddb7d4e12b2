// The recomposition rungs' names and the rules of their parameters (recompose_params.h).
#include "engine/select/recompose_params.h"

#include <string>

#include "engine/core/text_format.h"

namespace stof::engine {

const char* RecomposeVariantName(RecomposeVariant v) {
  return v == RecomposeVariant::kDecomposed ? "sd" : "sdf";
}

int64_t RecomposeSmemBytes(const RecomposeParams& p, int64_t head_dim, RecomposeVariant v) {
  if (v != RecomposeVariant::kRecomposed) return 0;
  if ((head_dim != 64 && head_dim != 128) || (p.sub_len != 64 && p.sub_len != 128) ||
      (p.block_m != 64 && p.block_m != 128))
    return 0;
  const int d = static_cast<int>(head_dim);
  const size_t qk = RecomposeQkSmemBytes(d, p.sub_len, p.block_m);
  const size_t pv = RecomposePvSmemBytes(d, p.sub_len, p.block_m);
  return static_cast<int64_t>(qk > pv ? qk : pv);
}

Status CheckRecomposeParams(const RecomposeParams& p, int64_t head_dim, RecomposeVariant v,
                            int64_t smem_limit_bytes) {
  const std::string what = std::string("recomposed MHA (") + RecomposeVariantName(v) + "): ";
  if (head_dim != 64 && head_dim != 128)
    return MakeError(what + "head_dim: expected 64 or 128, got " + Str(head_dim));
  if (p.sub_len != 64 && p.sub_len != 128)
    return MakeError(what + "params.sub_len: expected 64 or 128 (T, whole 64-bit mask words), "
                            "got " + Str(p.sub_len));
  if (p.block_m != 64 && p.block_m != 128)
    return MakeError(what + "params.block_m: expected 64 or 128, got " + Str(p.block_m));
  const int64_t smem = RecomposeSmemBytes(p, head_dim, v);
  if (smem > smem_limit_bytes)
    return MakeError(what + "params: sub_len " + Str(p.sub_len) + ", block_m " +
                     Str(p.block_m) + " at head_dim " + Str(head_dim) + " need " + Str(smem) +
                     " bytes of shared memory per block, the device allows " +
                     Str(smem_limit_bytes));
  return Status::Ok();
}

std::vector<RecomposeParams> SupportedRecomposeParams(int64_t head_dim, RecomposeVariant v,
                                                      int64_t smem_limit_bytes) {
  std::vector<RecomposeParams> out;
  for (int t : {64, 128})
    for (int bm : {64, 128}) {
      const RecomposeParams p{t, bm};
      if (CheckRecomposeParams(p, head_dim, v, smem_limit_bytes).IsOk()) out.push_back(p);
    }
  return out;
}

}  // namespace stof::engine
