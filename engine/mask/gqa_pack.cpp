// PackedRowsPerHead, ChooseGqaPacking and PackGqaMask (gqa_pack.h).
#include "engine/mask/gqa_pack.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace stof::engine {

int64_t PackedRowsPerHead(int64_t q_len) {
  int64_t rows = 1;
  while (rows < q_len) rows *= 2;
  return rows;
}

GqaPacking ChooseGqaPacking(int64_t heads, int64_t kv_heads, int64_t q_len, int64_t block_m) {
  if (kv_heads <= 0 || heads <= kv_heads || heads % kv_heads != 0) return {};
  const int64_t rows = PackedRowsPerHead(q_len);
  if (2 * rows > block_m) return {};
  return {heads / kv_heads, rows};
}

Expected<Mask> PackGqaMask(const Mask& mask, const GqaPacking& packing) {
  const std::string what = "packed GQA mask";
  if (!packing.Packed() || packing.rows < mask.Rows() || mask.Rows() < 1 ||
      packing.rows != PackedRowsPerHead(packing.rows))
    return MakeError(what + ": packing of " + std::to_string(packing.group) + " heads x " +
                     std::to_string(packing.rows) + " rows does not hold a mask of " +
                     std::to_string(mask.Rows()) + " rows (rows: a power of two >= L_q)");
  if (packing.group > Mask::kMaxLen / packing.rows)
    return MakeError(what + ": " + std::to_string(packing.group) + " heads x " +
                     std::to_string(packing.rows) + " rows exceed " +
                     std::to_string(Mask::kMaxLen) + " rows");
  STOF_ASSIGN_OR_RETURN(Mask packed,
                        Mask::Create(packing.group * packing.rows, mask.Cols(), what));
  const size_t row_bytes = static_cast<size_t>(mask.WordsPerRow()) * sizeof(uint64_t);
  for (int64_t g = 0; g < packing.group; ++g)
    for (int64_t r = 0; r < packing.rows; ++r)
      std::memcpy(packed.RowWords(g * packing.rows + r),
                  mask.RowWords(std::min(r, mask.Rows() - 1)), row_bytes);
  return packed;
}

}  // namespace stof::engine
