// DeviceBlockLayout, DeviceRowLayout and DeviceLayoutCache (device_layout.h). Each layout is
// packed into one host staging buffer and sent with one cudaMalloc + one cudaMemcpy: the
// 64-bit bitmaps first (8-byte aligned at the allocation's start), then the int32 arrays.
// Used by CudaBackend and by the GPU tests; the kernels read the arrays as is.
#include "kernels/attention_common/device_layout.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/attention_common/hopper_chunk.h"
#include "kernels/cuda_check.h"

namespace stof::kernels {

namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Copies `bytes` of `host` into a fresh device allocation (at least 16 bytes, so an empty
// layout still has a valid base pointer).
engine::Expected<void*> UploadBytes(const void* host, size_t bytes) {
  void* dev = nullptr;
  STOF_CUDA_TRY(cudaMalloc(&dev, std::max<size_t>(bytes, 16)));
  if (bytes > 0) {
    const cudaError_t e = cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) {
      cudaFree(dev);
      return CudaError(e, "cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)", __FILE__,
                       __LINE__);
    }
  }
  return dev;
}

// Per tile (block row) its visited blocks, the most any of `patterns` layouts visits there
// (their row pointers one after another, `rows` + 1 each).
std::vector<int32_t> MostVisitedPerTile(const std::vector<int32_t>& row_ptr, int64_t rows,
                                        int64_t patterns) {
  std::vector<int32_t> counts(static_cast<size_t>(rows), 0);
  for (int64_t p = 0; p < patterns; ++p)
    for (int64_t r = 0; r < rows; ++r) {
      const size_t at = static_cast<size_t>(p * (rows + 1) + r);
      counts[static_cast<size_t>(r)] =
          std::max(counts[static_cast<size_t>(r)], row_ptr[at + 1] - row_ptr[at]);
    }
  return counts;
}

// The tiles by visited blocks, most first (ties by index): the Hopper kernel's launch order.
std::vector<int32_t> HeavyFirst(const std::vector<int32_t>& counts) {
  std::vector<int32_t> order(counts.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = static_cast<int32_t>(r);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return counts[a] > counts[b]; });
  return order;
}

// One host staging buffer and one upload: the 64-bit bitmaps (8-byte aligned at the
// allocation's start), then each int32 array; `offsets` receives each array's byte offset,
// `bytes` the total.
engine::Expected<void*> UploadStaged(const std::vector<uint64_t>& bitmaps,
                                     const std::vector<const std::vector<int32_t>*>& arrays,
                                     std::vector<size_t>* offsets, size_t* bytes) {
  const size_t bitmap_bytes = bitmaps.size() * sizeof(uint64_t);
  size_t total = bitmap_bytes;
  for (const auto* a : arrays) total += a->size() * sizeof(int32_t);
  std::vector<unsigned char> staging(total);
  if (bitmap_bytes) std::memcpy(staging.data(), bitmaps.data(), bitmap_bytes);
  offsets->assign(arrays.size(), 0);
  size_t at = bitmap_bytes;
  for (size_t i = 0; i < arrays.size(); ++i) {
    (*offsets)[i] = at;
    const size_t n = arrays[i]->size() * sizeof(int32_t);
    if (n) std::memcpy(staging.data() + at, arrays[i]->data(), n);
    at += n;
  }
  *bytes = total;
  return UploadBytes(staging.data(), total);
}

}  // namespace

// ---- DeviceBlockLayout ------------------------------------------------------------------------

engine::Expected<std::unique_ptr<DeviceBlockLayout>> DeviceBlockLayout::Create(
    const engine::Mask& mask, int64_t block_m, int64_t block_n, int32_t split_cut,
    const engine::GqaPacking& packing, double fill_units) {
  const auto t0 = Clock::now();
  engine::Expected<engine::BlockLayout> layout = engine::BlockLayout();
  if (packing.Packed()) {
    auto packed = engine::PackGqaMask(mask, packing);
    if (!packed.IsOk()) return packed.ToStatus();
    layout = engine::BlockLayout::Build(*packed, block_m, block_n);
  } else {
    layout = engine::BlockLayout::Build(mask, block_m, block_n);
  }
  if (!layout.IsOk()) return engine::Error{layout.Message()};
  const double build_ms = MsSince(t0);
  auto dev = Upload(*layout, split_cut, packing, mask.Rows(), fill_units);
  if (dev.IsOk()) (*dev)->m_timing.host_build_ms = build_ms;
  return dev;
}

engine::Expected<std::unique_ptr<DeviceBlockLayout>> DeviceBlockLayout::Upload(
    const engine::BlockLayout& layout, int32_t split_cut, const engine::GqaPacking& packing,
    int64_t query_len, double fill_units) {
  return UploadAll({&layout}, {}, split_cut, packing, query_len, fill_units);
}

engine::Expected<std::unique_ptr<DeviceBlockLayout>> DeviceBlockLayout::CreatePatterns(
    const engine::MaskSet& set, int64_t block_m, int64_t block_n,
    const engine::GqaPacking& packing) {
  const int64_t group = set.Heads() > 0 && packing.Packed() ? packing.group : 1;
  if (packing.Packed() && !set.GroupsShareAPattern(group))
    return engine::Error{"device block layout: packing: the " + std::to_string(group) +
                         " query heads of a key/value head must share a pattern to share a tile"};
  const auto t0 = Clock::now();
  std::vector<engine::BlockLayout> built;
  built.reserve(set.Masks().size());
  for (const engine::Mask& mask : set.Masks()) {
    auto layout = engine::BlockLayout();
    if (packing.Packed()) {
      auto packed = engine::PackGqaMask(mask, packing);
      if (!packed.IsOk()) return packed.ToStatus();
      auto l = engine::BlockLayout::Build(*packed, block_m, block_n);
      if (!l.IsOk()) return l.ToStatus();
      layout = std::move(*l);
    } else {
      auto l = engine::BlockLayout::Build(mask, block_m, block_n);
      if (!l.IsOk()) return l.ToStatus();
      layout = std::move(*l);
    }
    built.push_back(std::move(layout));
  }
  const double build_ms = MsSince(t0);
  std::vector<const engine::BlockLayout*> layouts;
  for (const engine::BlockLayout& l : built) layouts.push_back(&l);
  auto dev = UploadAll(layouts, set.ItemPatterns(group, packing.Packed()), 0, packing,
                       set.Rows(), 0);
  if (dev.IsOk()) (*dev)->m_timing.host_build_ms = build_ms;
  return dev;
}

namespace {

// The block lists of several layouts as one: each layout's row pointers (BlockRows() + 1
// entries) in turn, offset by the blocks of the layouts before it, so that they index the
// concatenated column lists; part indices and bitmaps offset likewise.
struct JoinedLists {
  std::vector<int32_t> load_row_ptr, load_col_idx, load_part_idx, part_row_ptr, part_col_idx,
      full_row_ptr, full_col_idx;
  std::vector<uint64_t> bitmaps;
};

JoinedLists JoinLayouts(const std::vector<const engine::BlockLayout*>& layouts) {
  JoinedLists j;
  const auto append = [](std::vector<int32_t>& to, const std::vector<int32_t>& from,
                         int32_t offset, bool keep_negative = false) {
    for (int32_t x : from) to.push_back(keep_negative && x < 0 ? x : x + offset);
  };
  int32_t loads = 0, parts = 0, fulls = 0;
  for (const engine::BlockLayout* l : layouts) {
    append(j.load_row_ptr, l->LoadRowPtr(), loads);
    append(j.load_col_idx, l->LoadColIdx(), 0);
    append(j.load_part_idx, l->LoadPartIdx(), parts, /*keep_negative=*/true);
    append(j.part_row_ptr, l->PartRowPtr(), parts);
    append(j.part_col_idx, l->PartColIdx(), 0);
    append(j.full_row_ptr, l->FullRowPtr(), fulls);
    append(j.full_col_idx, l->FullColIdx(), 0);
    j.bitmaps.insert(j.bitmaps.end(), l->PartBitmaps().begin(), l->PartBitmaps().end());
    loads += static_cast<int32_t>(l->LoadColIdx().size());
    parts += static_cast<int32_t>(l->PartColIdx().size());
    fulls += static_cast<int32_t>(l->FullColIdx().size());
  }
  return j;
}

}  // namespace

engine::Expected<std::unique_ptr<DeviceBlockLayout>> DeviceBlockLayout::UploadAll(
    const std::vector<const engine::BlockLayout*>& layouts,
    const std::vector<int32_t>& item_patterns, int32_t split_cut,
    const engine::GqaPacking& packing, int64_t query_len, double fill_units) {
  const engine::BlockLayout& layout = *layouts.front();
  for (const engine::BlockLayout* l : layouts) {
    if (l->LoadRowPtr().empty())
      return engine::Error{"device block layout: layout: empty (never built)"};
    if (l->Rows() != layout.Rows() || l->Cols() != layout.Cols() ||
        l->BlockM() != layout.BlockM() || l->BlockN() != layout.BlockN())
      return engine::Error{"device block layout: patterns: every layout must have one size and "
                           "block size"};
  }
  if (packing.Packed() &&
      (layout.Rows() != packing.group * packing.rows || query_len < 1 || query_len > packing.rows))
    return engine::Error{"device block layout: packing: " + std::to_string(packing.group) +
                         " heads x " + std::to_string(packing.rows) + " rows does not match a " +
                         std::to_string(layout.Rows()) + "-row layout for L_q " +
                         std::to_string(query_len)};
  const auto t0 = Clock::now();
  std::unique_ptr<DeviceBlockLayout> d(new DeviceBlockLayout());
  const bool joined = layouts.size() > 1 || !item_patterns.empty();
  const JoinedLists j = joined ? JoinLayouts(layouts) : JoinedLists{};
  d->m_block_m = layout.BlockM();
  d->m_block_n = layout.BlockN();
  d->m_seq_len = packing.Packed() ? query_len : layout.Rows();
  d->m_key_len = layout.Cols();
  d->m_packing = packing;
  d->m_block_rows = layout.BlockRows();
  d->m_patterns = static_cast<int64_t>(layouts.size());
  d->m_pattern_items = static_cast<int64_t>(item_patterns.size());
  d->m_bitmap_words = layout.BitmapWords();
  const auto& load_row_ptr = joined ? j.load_row_ptr : layout.LoadRowPtr();
  const auto& load_col_idx = joined ? j.load_col_idx : layout.LoadColIdx();
  d->m_valid_blocks = static_cast<int64_t>(load_col_idx.size());
  d->m_part_blocks =
      static_cast<int64_t>((joined ? j.part_col_idx : layout.PartColIdx()).size());
  d->m_item_valid_blocks = d->m_valid_blocks;
  if (joined) {
    d->m_item_valid_blocks = 0;
    for (int32_t p : item_patterns)
      d->m_item_valid_blocks +=
          static_cast<int64_t>(layouts[static_cast<size_t>(p)]->LoadColIdx().size());
  }

  // Staging order: the 64-bit bitmaps (8-byte aligned at the allocation's start), then the
  // int32 arrays: the load CSR and part indices (mma.sync kernel), the part and full CSRs, the
  // heavy-first order, the work counter, the split units and the items' patterns (Hopper
  // kernel).
  const auto& bitmaps = joined ? j.bitmaps : layout.PartBitmaps();
  const std::vector<int32_t> counts =
      MostVisitedPerTile(load_row_ptr, layout.BlockRows(), static_cast<int64_t>(layouts.size()));
  const std::vector<int32_t> heavy_first = HeavyFirst(counts);
  const std::vector<int32_t> work_counter(2, 0);
  // The split launch's units: heavy tiles cut into chunks (hopper_chunk.h); one mask only.
  // STOF_HOPPER_SPLIT_CUT=n sets the cut of layouts that do not ask for one (experiments).
  if (split_cut <= 0) {
    if (const char* e = std::getenv("STOF_HOPPER_SPLIT_CUT")) split_cut = std::atoi(e);
  }
  std::vector<int32_t> units;
  if (!joined) {
    const detail::HopperUnitPlan plan =
        detail::PlanHopperUnits(counts, heavy_first, split_cut, fill_units);
    units.reserve(plan.units.size() * 2);
    for (const detail::HopperUnit& u : plan.units) {
      units.push_back(u.tile);
      units.push_back(detail::PackPiece(u.chunk, u.chunks, u.slot));
    }
    d->m_unit_count = static_cast<int64_t>(plan.units.size());
    d->m_split_slots = plan.split_slots;
    d->m_split_cut = plan.cut;
  }
  d->m_max_tile_blocks = heavy_first.empty() ? 0 : counts[static_cast<size_t>(heavy_first[0])];
  const std::vector<int32_t>* arrays[] = {
      &load_row_ptr,
      &load_col_idx,
      joined ? &j.load_part_idx : &layout.LoadPartIdx(),
      joined ? &j.part_row_ptr : &layout.PartRowPtr(),
      joined ? &j.part_col_idx : &layout.PartColIdx(),
      joined ? &j.full_row_ptr : &layout.FullRowPtr(),
      joined ? &j.full_col_idx : &layout.FullColIdx(),
      &heavy_first,
      &work_counter,
      &units,
      &item_patterns};
  std::vector<size_t> offsets;
  auto dev = UploadStaged(bitmaps, {std::begin(arrays), std::end(arrays)}, &offsets, &d->m_bytes);
  if (!dev.IsOk()) return engine::Error{"device block layout: " + dev.Message()};
  d->m_base = *dev;
  auto* base = static_cast<unsigned char*>(d->m_base);
  const auto int_array = [&](size_t i) { return reinterpret_cast<const int32_t*>(base + offsets[i]); };
  d->m_part_bitmaps = reinterpret_cast<const uint64_t*>(base);
  d->m_load_row_ptr = int_array(0);
  d->m_load_col_idx = int_array(1);
  d->m_load_part_idx = int_array(2);
  d->m_part_row_ptr = int_array(3);
  d->m_part_col_idx = int_array(4);
  d->m_full_row_ptr = int_array(5);
  d->m_full_col_idx = int_array(6);
  d->m_heavy_first = int_array(7);
  d->m_work_counter = const_cast<int32_t*>(int_array(8));
  d->m_units = int_array(9);
  d->m_item_patterns = item_patterns.empty() ? nullptr : int_array(10);
  d->m_timing.upload_ms = MsSince(t0);
  return d;
}

engine::Expected<DeviceBlockLayout::SplitScratch> DeviceBlockLayout::SplitWorkspace(
    size_t counter_bytes, size_t partial_bytes, void* stream) const {
  std::lock_guard<std::mutex> lock(m_split_mutex);
  const size_t counters = (counter_bytes + 255) / 256 * 256;  // partials 256-byte aligned
  if (m_split_base == nullptr || m_split_counter_bytes < counters ||
      m_split_partial_bytes < partial_bytes) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    STOF_CUDA_TRY(cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &capture));
    if (capture != cudaStreamCaptureStatusNone) return SplitScratch{};
    const size_t want_counters = std::max(counters, m_split_counter_bytes);
    const size_t want_partials = std::max(partial_bytes, m_split_partial_bytes);
    if (m_split_base != nullptr) {
      // Launches on any stream may still use it.
      STOF_CUDA_TRY(cudaDeviceSynchronize());
      STOF_CUDA_TRY(cudaFree(m_split_base));
      m_split_base = nullptr;
      m_split_counter_bytes = m_split_partial_bytes = 0;
    }
    void* base = nullptr;
    STOF_CUDA_TRY(cudaMalloc(&base, want_counters + want_partials));
    const cudaError_t e = cudaMemset(base, 0, want_counters);
    if (e != cudaSuccess) {
      cudaFree(base);
      return CudaError(e, "cudaMemset(base, 0, want_counters)", __FILE__, __LINE__);
    }
    m_split_base = base;
    m_split_counter_bytes = want_counters;
    m_split_partial_bytes = want_partials;
  }
  SplitScratch out;
  out.arrivals = static_cast<int32_t*>(m_split_base);
  out.partials =
      reinterpret_cast<float*>(static_cast<unsigned char*>(m_split_base) + m_split_counter_bytes);
  return out;
}

size_t DeviceBlockLayout::SplitWorkspaceBytes() const {
  std::lock_guard<std::mutex> lock(m_split_mutex);
  return m_split_counter_bytes + m_split_partial_bytes;
}

DeviceBlockLayout::~DeviceBlockLayout() {
  // Errors here have nowhere to go; the memory is lost.
  if (m_base != nullptr) cudaFree(m_base);
  if (m_split_base != nullptr) cudaFree(m_split_base);
}

// ---- DeviceRowLayout --------------------------------------------------------------------------

engine::Expected<std::unique_ptr<DeviceRowLayout>> DeviceRowLayout::Create(
    const engine::Mask& mask) {
  if (mask.Empty() || mask.Rows() != mask.Cols()) {
    return engine::Error{"device row layout: mask: must be a non-empty square mask, got " +
                         std::to_string(mask.Rows()) + " x " + std::to_string(mask.Cols())};
  }
  const auto t0 = Clock::now();
  const int64_t nnz = mask.Count();
  if (nnz > kMaxNnz) {
    return engine::Error{"device row layout: mask: " + std::to_string(nnz) +
                         " attended elements exceed the row-wise kernel's limit of " +
                         std::to_string(kMaxNnz) + "; use the block-wise kernel"};
  }
  const int64_t L = mask.Rows();
  // One buffer: row_ptr [L + 1] then col_idx [nnz], written in place (no second copy).
  std::vector<int32_t> staging(static_cast<size_t>(L + 1 + nnz));
  int32_t* row_ptr = staging.data();
  int32_t* col_idx = staging.data() + L + 1;
  int32_t n = 0;
  row_ptr[0] = 0;
  for (int64_t r = 0; r < L; ++r) {
    const uint64_t* words = mask.RowWords(r);
    for (int64_t w = 0; w < mask.WordsPerRow(); ++w) {
      uint64_t bits = words[w];
      while (bits != 0) {
        col_idx[n++] = static_cast<int32_t>(w * 64 + std::countr_zero(bits));
        bits &= bits - 1;  // clear the lowest set bit
      }
    }
    row_ptr[r + 1] = n;
  }
  std::unique_ptr<DeviceRowLayout> d(new DeviceRowLayout());
  d->m_seq_len = L;
  d->m_nnz = nnz;
  d->m_timing.host_build_ms = MsSince(t0);
  const auto t1 = Clock::now();
  const size_t bytes = staging.size() * sizeof(int32_t);
  auto dev = UploadBytes(staging.data(), bytes);
  if (!dev.IsOk()) return engine::Error{"device row layout: " + dev.Message()};
  d->m_base = *dev;
  d->m_bytes = bytes;
  d->m_row_ptr = static_cast<const int32_t*>(d->m_base);
  d->m_col_idx = d->m_row_ptr + L + 1;
  d->m_timing.upload_ms = MsSince(t1);
  return d;
}

DeviceRowLayout::~DeviceRowLayout() {
  if (m_base != nullptr) cudaFree(m_base);
}

// ---- DeviceLayoutCache ------------------------------------------------------------------------

void DeviceLayoutCache::EvictIfFull() {
  while (m_entries.size() >= kMaxEntries) {
    auto oldest = m_entries.begin();
    for (auto it = m_entries.begin(); it != m_entries.end(); ++it)
      if (it->second.last_use < oldest->second.last_use) oldest = it;
    m_entries.erase(oldest);
  }
}

engine::Expected<std::shared_ptr<const DeviceBlockLayout>> DeviceLayoutCache::GetBlock(
    const engine::Mask& mask, int64_t block_m, int64_t block_n) {
  const Key key{mask.Hash(), mask.Rows(), mask.Cols(), block_m, block_n};
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_entries.find(key);
  if (it != m_entries.end() && it->second.block) {
    ++m_hits;
    it->second.last_use = ++m_clock;
    return it->second.block;
  }
  auto built = DeviceBlockLayout::Create(mask, block_m, block_n);
  if (!built.IsOk()) return engine::Error{built.Message()};
  ++m_misses;
  EvictIfFull();
  Entry& e = m_entries[key];
  e.block = std::shared_ptr<const DeviceBlockLayout>(std::move(*built));
  e.last_use = ++m_clock;
  return e.block;
}

engine::Expected<std::shared_ptr<const DeviceRowLayout>> DeviceLayoutCache::GetRow(
    const engine::Mask& mask) {
  const Key key{mask.Hash(), mask.Rows(), mask.Cols(), 0, 0};
  std::lock_guard<std::mutex> lock(m_mutex);
  auto it = m_entries.find(key);
  if (it != m_entries.end() && it->second.row) {
    ++m_hits;
    it->second.last_use = ++m_clock;
    return it->second.row;
  }
  auto built = DeviceRowLayout::Create(mask);
  if (!built.IsOk()) return engine::Error{built.Message()};
  ++m_misses;
  EvictIfFull();
  Entry& e = m_entries[key];
  e.row = std::shared_ptr<const DeviceRowLayout>(std::move(*built));
  e.last_use = ++m_clock;
  return e.row;
}

size_t DeviceLayoutCache::Size() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_entries.size();
}
int64_t DeviceLayoutCache::Hits() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_hits;
}
int64_t DeviceLayoutCache::Misses() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_misses;
}
void DeviceLayoutCache::Clear() {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_entries.clear();
}

}  // namespace stof::kernels
