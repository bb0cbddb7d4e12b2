// Packed GQA: the rows of the query heads that share one key/value head, stacked into one
// mask, so a kernel tile holds several heads' rows and loads each K/V block once for all of
// them (FlashAttention-3's PackGQA). Used where a query is short (a decode step, a short
// prefill): PreparedMha builds the Hopper kernel's layout from PackGqaMask, the Hopper tile
// model (engine/select/hopper_select.h) estimates on it, and the kernel maps a packed row m
// back to query head m / rows of its group, query row m % rows
// (kernels/attention_hopper/hopper_scheduler.cuh, RowCoords).
// Invariant: row g * rows + r of the packed mask is row min(r, L_q - 1) of the mask, for every
// head g < group; rows r >= L_q are padding that no kernel reads or writes, copied from the last
// row so that they never turn a full block into a part block.
#pragma once

#include <cstdint>

#include "engine/core/status.h"
#include "engine/mask/mask.h"

namespace stof::engine {

// How a layout's rows map to query rows: group 0 = one query head's rows (row r = query row
// r); else `group` heads of `rows` rows each (rows a power of two >= L_q).
struct GqaPacking {
  int64_t group = 0;
  int64_t rows = 0;
  bool Packed() const { return group > 0; }
  bool operator==(const GqaPacking&) const = default;
};

// The smallest power of two >= q_len (the rows per head of a packed tile; 1 for q_len <= 1).
int64_t PackedRowsPerHead(int64_t q_len);

// The packing a block_m-row tile uses for `heads` query heads over `kv_heads` key/value heads
// at query length q_len: packed when heads share key/value heads (group > 1) and at least two
// heads' rows fit one tile (2 * PackedRowsPerHead(q_len) <= block_m); else unpacked.
GqaPacking ChooseGqaPacking(int64_t heads, int64_t kv_heads, int64_t q_len, int64_t block_m);

// The mask of `packing` (group * rows rows, L_k columns) built from `mask` (L_q x L_k, L_q <=
// packing.rows). Errors name the packing when it does not fit the mask or Mask's limits.
Expected<Mask> PackGqaMask(const Mask& mask, const GqaPacking& packing);

}  // namespace stof::engine
