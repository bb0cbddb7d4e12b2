// ComputeLayoutWork and ValidBlocksPerRow (layout_work.h).
#include "engine/layout/layout_work.h"

#include <string>

namespace stof::engine {

Expected<LayoutWork> ComputeLayoutWork(const LayoutStats& stats, int64_t seq_len,
                                       const Workload& workload) {
  STOF_RETURN_IF_ERROR(workload.Validate("workload"));
  if (workload.seq_len != seq_len)
    return MakeError("workload.seq_len: " + std::to_string(workload.seq_len) +
                     " differs from the layout's L = " + std::to_string(seq_len));
  const double per_element = 4.0 * static_cast<double>(workload.head_dim) *
                             static_cast<double>(workload.batch) * static_cast<double>(workload.heads);
  LayoutWork w;
  w.block_kernel_flops = per_element * static_cast<double>(stats.block_kernel_elements);
  w.valid_flops = per_element * static_cast<double>(stats.nnz);
  w.wasted_flops = w.block_kernel_flops - w.valid_flops;
  w.wasted_fraction = w.block_kernel_flops > 0 ? w.wasted_flops / w.block_kernel_flops : 0.0;
  return w;
}

std::vector<int32_t> ValidBlocksPerRow(const BlockLayout& layout) {
  const std::vector<int32_t>& ptr = layout.LoadRowPtr();
  std::vector<int32_t> out;
  if (ptr.size() < 2) return out;
  out.reserve(ptr.size() - 1);
  for (size_t r = 0; r + 1 < ptr.size(); ++r) out.push_back(ptr[r + 1] - ptr[r]);
  return out;
}

}  // namespace stof::engine
