// BlockLayout construction, queries, statistics and JSON forms (see block_layout.h for the
// invariants). Used through the header by kernel selection, the CLI, the GUI and the kernels.
// Build reads every mask word once: attended cells are counted per block straight from the
// 64-bit row words (with BN a power of two >= 16, a word covers 64 / BN whole blocks when
// BN <= 64, and a block spans BN / 64 whole words otherwise, so no block straddles a word
// boundary inside a word); blocks are classified from the counts, and only part blocks have
// their bits copied out. Mask padding bits are zero, so counts past column L are zero too.
#include "engine/layout/block_layout.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace stof::engine {

namespace {

constexpr int64_t kMinBlock = 16;
constexpr int64_t kMaxBlock = 256;

Status CheckOneBlockSize(const char* field, int64_t v) {
  if (v < kMinBlock || v > kMaxBlock || !std::has_single_bit(static_cast<uint64_t>(v))) {
    return MakeError(std::string("layout: ") + field + ": must be a power of two in " +
                     std::to_string(kMinBlock) + ".." + std::to_string(kMaxBlock) + ", got " +
                     std::to_string(v));
  }
  return Status::Ok();
}

// Per-byte popcounts of x (each byte of the result holds 0..8). Plain SWAR rather than
// std::popcount: without -mpopcnt GCC turns std::popcount into a libgcc call, a large share
// of Build's time; one SWAR pass also yields the counts of all 16- or 32-bit slices of a
// word at once.
inline uint64_t ByteCounts(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  return (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
}

inline int32_t WordCount(uint64_t x) {
  return static_cast<int32_t>((ByteCounts(x) * 0x0101010101010101ull) >> 56);
}

// Adds the popcount of each kPer-way slice of every word of one mask row to counts
// (counts[w * kPer + k] for slice k of word w). kPer = 64 / BN, for BN in {16, 32, 64}.
template <int kPer>
void AccumulateSlices(const uint64_t* row, int64_t words, int32_t* counts) {
  for (int64_t w = 0; w < words; ++w) {
    const uint64_t x = row[w];
    if (x == 0) continue;
    int32_t* c = counts + w * kPer;
    if constexpr (kPer == 1) {
      c[0] += WordCount(x);
    } else {
      const uint64_t b = ByteCounts(x);
      // Byte sums never exceed 64, so the adds below never carry across bytes.
      const uint64_t h = b + (b >> 8);  // byte 2k: count of 16-bit slice k
      if constexpr (kPer == 4) {
        c[0] += static_cast<int32_t>(h & 0xff);
        c[1] += static_cast<int32_t>((h >> 16) & 0xff);
        c[2] += static_cast<int32_t>((h >> 32) & 0xff);
        c[3] += static_cast<int32_t>((h >> 48) & 0xff);
      } else {
        static_assert(kPer == 2);
        const uint64_t q = h + (h >> 16);  // byte 4k: count of 32-bit slice k
        c[0] += static_cast<int32_t>(q & 0xff);
        c[1] += static_cast<int32_t>((q >> 32) & 0xff);
      }
    }
  }
}

// BN > 64: a block spans 2^shift words; counts[w >> shift] gets the whole word.
void AccumulateSpans(const uint64_t* row, int64_t words, int shift, int32_t* counts) {
  for (int64_t w = 0; w < words; ++w) {
    const uint64_t x = row[w];
    if (x != 0) counts[w >> shift] += WordCount(x);
  }
}

uint64_t LowBits(int64_t n) { return n >= 64 ? ~uint64_t{0} : (uint64_t{1} << n) - 1; }

std::string WordsToHex(const uint64_t* words, int64_t n) {
  std::string s(static_cast<size_t>(n) * 16, '0');
  char buf[17];
  for (int64_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(words[i]));
    s.replace(static_cast<size_t>(i) * 16, 16, buf);
  }
  return s;
}

}  // namespace

const char* BlockClassName(BlockClass c) {
  switch (c) {
    case BlockClass::kEmpty: return "empty";
    case BlockClass::kPart: return "part";
    case BlockClass::kFull: return "full";
  }
  return "unknown";
}

Status BlockLayout::CheckBlockSize(int64_t block_m, int64_t block_n) {
  STOF_RETURN_IF_ERROR(CheckOneBlockSize("block_m", block_m));
  STOF_RETURN_IF_ERROR(CheckOneBlockSize("block_n", block_n));
  return Status::Ok();
}

Expected<BlockLayout> BlockLayout::Build(const Mask& mask, int64_t block_m, int64_t block_n) {
  STOF_RETURN_IF_ERROR(CheckBlockSize(block_m, block_n));
  if (mask.Empty()) {
    return MakeError("layout: mask: is empty (" + std::to_string(mask.Rows()) + " x " +
                     std::to_string(mask.Cols()) + "); each side must be at least 1");
  }
  BlockLayout l = Shape(mask.Rows(), mask.Cols(), block_m, block_n);

  const int64_t words = mask.WordsPerRow();
  // Pass 1: attended cells per block into a grid (one int32 per block, at most 1/8 of the
  // mask's bytes), and the number of full and part blocks, so that pass 2 allocates every
  // array once at its exact size: growing the bitmaps by doubling cost more in page faults
  // than the counting itself. A grid row is sized for every slice of every word; slices past
  // BlockCols() only see padding bits, which are zero.
  const int64_t stride = block_n <= 64 ? words * (64 / block_n) : l.m_block_cols;
  std::vector<int32_t> grid(static_cast<size_t>(l.m_block_rows * stride), 0);
  const int span_shift = block_n > 64 ? std::countr_zero(static_cast<uint64_t>(block_n / 64)) : 0;
  int64_t n_full = 0, n_part = 0;
  for (int64_t br = 0; br < l.m_block_rows; ++br) {
    int32_t* counts = grid.data() + br * stride;
    const int64_t r1 = std::min((br + 1) * block_m, l.m_rows);
    for (int64_t r = br * block_m; r < r1; ++r) {
      const uint64_t* row = mask.RowWords(r);
      switch (block_n) {
        case 16: AccumulateSlices<4>(row, words, counts); break;
        case 32: AccumulateSlices<2>(row, words, counts); break;
        case 64: AccumulateSlices<1>(row, words, counts); break;
        default: AccumulateSpans(row, words, span_shift, counts); break;
      }
    }
    for (int64_t bc = 0; bc < l.m_block_cols; ++bc) {
      const int32_t n = counts[bc];
      if (n == 0) continue;
      l.m_nnz += n;
      if (n == l.CellsInRange(br, bc)) {
        ++n_full;
      } else {
        ++n_part;
      }
    }
  }

  // Pass 2: CSR arrays and part bitmaps. Sizes fit int32: at most (32768 / 16)^2 blocks.
  l.Reserve(n_full, n_part);
  for (int64_t br = 0; br < l.m_block_rows; ++br) {
    const int32_t* counts = grid.data() + br * stride;
    const int64_t r0 = br * block_m;
    const int64_t rows_in = std::min(r0 + block_m, l.m_rows) - r0;
    for (int64_t bc = 0; bc < l.m_block_cols; ++bc) {
      const int32_t n = counts[bc];
      if (n == 0) continue;
      if (n == l.CellsInRange(br, bc)) {
        l.AddFull(bc);
        continue;
      }
      uint64_t* dst = l.AddPart(bc, n);
      // Copy the block's bits; rows past the mask and columns past L stay zero (padding).
      const int64_t c0 = bc * block_n;
      const int64_t w0 = c0 >> 6;
      if (block_n <= 64) {
        const int64_t off = c0 & 63;
        const uint64_t keep = LowBits(block_n);
        for (int64_t i = 0; i < rows_in; ++i) {
          const uint64_t bits = (mask.RowWords(r0 + i)[w0] >> off) & keep;
          const int64_t pos = i * block_n;
          dst[pos >> 6] |= bits << (pos & 63);
        }
      } else {
        const int64_t span = block_n / 64;
        const int64_t n_words = std::min(span, words - w0);
        for (int64_t i = 0; i < rows_in; ++i) {
          const uint64_t* src = mask.RowWords(r0 + i) + w0;
          std::copy(src, src + n_words, dst + i * span);
        }
      }
    }
    l.EndBlockRow();
  }
  return l;
}

BlockLayout BlockLayout::Shape(int64_t rows, int64_t cols, int64_t block_m, int64_t block_n) {
  BlockLayout l;
  l.m_block_m = block_m;
  l.m_block_n = block_n;
  l.m_rows = rows;
  l.m_cols = cols;
  l.m_block_rows = (rows + block_m - 1) / block_m;
  l.m_block_cols = (cols + block_n - 1) / block_n;
  return l;
}

void BlockLayout::Reserve(int64_t n_full, int64_t n_part) {
  const size_t row_ptrs = static_cast<size_t>(m_block_rows) + 1;
  const size_t n_load = static_cast<size_t>(n_full + n_part);
  m_full_row_ptr.reserve(row_ptrs);
  m_part_row_ptr.reserve(row_ptrs);
  m_load_row_ptr.reserve(row_ptrs);
  m_full_col_idx.reserve(static_cast<size_t>(n_full));
  m_part_col_idx.reserve(static_cast<size_t>(n_part));
  m_part_popcount.reserve(static_cast<size_t>(n_part));
  m_load_col_idx.reserve(n_load);
  m_load_is_full.reserve(n_load);
  m_load_part_idx.reserve(n_load);
  m_part_bitmaps.assign(static_cast<size_t>(n_part * BitmapWords()), 0);
  m_full_row_ptr.push_back(0);
  m_part_row_ptr.push_back(0);
  m_load_row_ptr.push_back(0);
}

void BlockLayout::EndBlockRow() {
  m_full_row_ptr.push_back(static_cast<int32_t>(m_full_col_idx.size()));
  m_part_row_ptr.push_back(static_cast<int32_t>(m_part_col_idx.size()));
  m_load_row_ptr.push_back(static_cast<int32_t>(m_load_col_idx.size()));
}

int64_t BlockLayout::LoadIndexOf(int64_t block_row, int64_t block_col) const {
  if (block_row < 0 || block_row >= m_block_rows || block_col < 0 || block_col >= m_block_cols) {
    return -1;
  }
  const auto begin = m_load_col_idx.begin() + m_load_row_ptr[static_cast<size_t>(block_row)];
  const auto end = m_load_col_idx.begin() + m_load_row_ptr[static_cast<size_t>(block_row) + 1];
  const auto it = std::lower_bound(begin, end, static_cast<int32_t>(block_col));
  if (it == end || *it != block_col) return -1;
  return it - m_load_col_idx.begin();
}

BlockClass BlockLayout::ClassAt(int64_t block_row, int64_t block_col) const {
  const int64_t k = LoadIndexOf(block_row, block_col);
  if (k < 0) return BlockClass::kEmpty;
  return m_load_is_full[static_cast<size_t>(k)] ? BlockClass::kFull : BlockClass::kPart;
}

int64_t BlockLayout::PopcountAt(int64_t block_row, int64_t block_col) const {
  const int64_t k = LoadIndexOf(block_row, block_col);
  if (k < 0) return 0;
  const int32_t p = m_load_part_idx[static_cast<size_t>(k)];
  if (p >= 0) return m_part_popcount[static_cast<size_t>(p)];
  const int64_t r0 = block_row * m_block_m, c0 = block_col * m_block_n;
  return (std::min(r0 + m_block_m, m_rows) - r0) * (std::min(c0 + m_block_n, m_cols) - c0);
}

Mask BlockLayout::ToMask() const {
  auto created = Mask::Create(m_rows, m_cols, "layout");
  if (!created.IsOk()) return Mask();  // default-constructed, or past Mask::kMaxLen
  Mask m = std::move(created).Value();
  const int64_t words = m.WordsPerRow();
  const int64_t bitmap_words = BitmapWords();
  for (int64_t br = 0; br < m_block_rows; ++br) {
    const int64_t r0 = br * m_block_m;
    const int64_t r1 = std::min(r0 + m_block_m, m_rows);
    for (int32_t k = m_load_row_ptr[static_cast<size_t>(br)];
         k < m_load_row_ptr[static_cast<size_t>(br) + 1]; ++k) {
      const int64_t c0 = int64_t{m_load_col_idx[static_cast<size_t>(k)]} * m_block_n;
      const int32_t p = m_load_part_idx[static_cast<size_t>(k)];
      if (p < 0) {
        m.SetRect(r0, r1, c0, c0 + m_block_n);
        continue;
      }
      const uint64_t* src = m_part_bitmaps.data() + int64_t{p} * bitmap_words;
      const int64_t w0 = c0 >> 6;
      if (m_block_n <= 64) {
        const uint64_t keep = LowBits(m_block_n);
        for (int64_t i = 0; i < r1 - r0; ++i) {
          const int64_t pos = i * m_block_n;
          const uint64_t bits = (src[pos >> 6] >> (pos & 63)) & keep;
          m.RowWords(r0 + i)[w0] |= bits << (c0 & 63);
        }
      } else {
        const int64_t span = m_block_n / 64;
        const int64_t n_words = std::min(span, words - w0);
        for (int64_t i = 0; i < r1 - r0; ++i) {
          uint64_t* dst = m.RowWords(r0 + i) + w0;
          for (int64_t w = 0; w < n_words; ++w) dst[w] |= src[i * span + w];
        }
      }
    }
  }
  return m;
}

LayoutStats BlockLayout::StatsFromCounts(int64_t nnz, int64_t full, int64_t part,
                                         int64_t index_entries, int64_t min_row,
                                         int64_t max_row) const {
  LayoutStats s;
  s.block_m = m_block_m;
  s.block_n = m_block_n;
  s.block_rows = m_block_rows;
  s.block_cols = m_block_cols;
  s.nnz = nnz;
  const double cells = static_cast<double>(m_rows) * static_cast<double>(m_cols);
  s.density = cells > 0 ? static_cast<double>(nnz) / cells : 0.0;
  s.full_blocks = full;
  s.part_blocks = part;
  const int64_t total = m_block_rows * m_block_cols;
  s.empty_blocks = total - full - part;
  s.valid_block_ratio =
      total > 0 ? static_cast<double>(full + part) / static_cast<double>(total) : 0.0;
  s.index_bytes = index_entries * static_cast<int64_t>(sizeof(int32_t));
  s.bitmap_bytes = part * BitmapWords() * static_cast<int64_t>(sizeof(uint64_t));
  s.block_kernel_elements = (full + part) * m_block_m * m_block_n;
  s.wasted_fraction = s.block_kernel_elements > 0
                          ? 1.0 - static_cast<double>(nnz) /
                                      static_cast<double>(s.block_kernel_elements)
                          : 0.0;
  s.min_blocks_per_row = min_row;
  s.max_blocks_per_row = max_row;
  return s;
}

LayoutStats BlockLayout::Stats() const {
  int64_t min_row = 0, max_row = 0;
  for (int64_t br = 0; br < m_block_rows; ++br) {
    const int64_t n = m_load_row_ptr[static_cast<size_t>(br) + 1] -
                      m_load_row_ptr[static_cast<size_t>(br)];
    max_row = br == 0 ? n : std::max(max_row, n);
    min_row = br == 0 ? n : std::min(min_row, n);
  }
  const size_t entries = m_full_row_ptr.size() + m_full_col_idx.size() + m_part_row_ptr.size() +
                         m_part_col_idx.size() + m_load_row_ptr.size() + m_load_col_idx.size();
  return StatsFromCounts(m_nnz, static_cast<int64_t>(m_full_col_idx.size()),
                         static_cast<int64_t>(m_part_col_idx.size()),
                         static_cast<int64_t>(entries), min_row, max_row);
}

nlohmann::json BlockLayout::ToFlexJson() const {
  // One (num_blocks, indices) pair per class: each indices row is the row's columns of that
  // class, then every other column, both in increasing order.
  auto rows_of = [this](const std::vector<int32_t>& row_ptr, const std::vector<int32_t>& col_idx,
                        nlohmann::json& num, nlohmann::json& indices) {
    num = nlohmann::json::array();
    indices = nlohmann::json::array();
    std::vector<uint8_t> listed(static_cast<size_t>(m_block_cols));
    std::vector<int32_t> row;
    row.reserve(static_cast<size_t>(m_block_cols));
    for (int64_t br = 0; br < m_block_rows; ++br) {
      std::fill(listed.begin(), listed.end(), 0);
      row.clear();
      const int32_t b = row_ptr[static_cast<size_t>(br)], e = row_ptr[static_cast<size_t>(br) + 1];
      for (int32_t k = b; k < e; ++k) {
        row.push_back(col_idx[static_cast<size_t>(k)]);
        listed[static_cast<size_t>(col_idx[static_cast<size_t>(k)])] = 1;
      }
      for (int32_t c = 0; c < m_block_cols; ++c) {
        if (!listed[static_cast<size_t>(c)]) row.push_back(c);
      }
      num.push_back(e - b);
      indices.push_back(row);
    }
  };
  nlohmann::json j;
  j["block_size"] = nlohmann::json::array({m_block_m, m_block_n});
  j["seq_lengths"] = nlohmann::json::array({m_rows, m_cols});
  rows_of(m_part_row_ptr, m_part_col_idx, j["kv_num_blocks"], j["kv_indices"]);
  rows_of(m_full_row_ptr, m_full_col_idx, j["full_kv_num_blocks"], j["full_kv_indices"]);
  return j;
}

nlohmann::json BlockLayout::ToJson() const {
  nlohmann::json j;
  j["block_size"] = nlohmann::json::array({m_block_m, m_block_n});
  j["seq_lengths"] = nlohmann::json::array({m_rows, m_cols});
  j["block_rows"] = m_block_rows;
  j["block_cols"] = m_block_cols;
  j["nnz"] = m_nnz;
  j["full_row_ptr"] = m_full_row_ptr;
  j["full_col_idx"] = m_full_col_idx;
  j["part_row_ptr"] = m_part_row_ptr;
  j["part_col_idx"] = m_part_col_idx;
  j["load_row_ptr"] = m_load_row_ptr;
  j["load_col_idx"] = m_load_col_idx;
  j["load_is_full"] = m_load_is_full;
  j["load_part_idx"] = m_load_part_idx;
  j["part_popcount"] = m_part_popcount;
  nlohmann::json bitmaps = nlohmann::json::array();
  const int64_t bitmap_words = BitmapWords();
  for (size_t p = 0; p < m_part_col_idx.size(); ++p) {
    bitmaps.push_back(
        WordsToHex(m_part_bitmaps.data() + static_cast<int64_t>(p) * bitmap_words, bitmap_words));
  }
  j["part_bitmaps"] = std::move(bitmaps);
  return j;
}

}  // namespace stof::engine
