// BlockLayout from and to RowRuns (block_layout.h): the layout of a mask that is never held
// as L x L bits, for lengths past Mask::kMaxLen, and its statistics alone (StatsOf, the
// builder's first pass). Used by `stof layout` past 32768 (masks without a block rule), the
// block-size table and AnalyzeRowRuns (docs/masks.md, "Masks without L x L bits (row runs)").
// Build makes the same two passes as the dense Build (count, then fill arrays allocated at
// their exact sizes), but counts a block row from its rows' runs: a run adds its cells to its
// first and last block and BN to each block between them through a level that rises at the
// second block and falls at the last, so a run costs O(1) however many blocks it crosses.
// Only the block columns a run starts or ends in are visited one by one; the stretches
// between them share one count (`BlockRowCounter`). Bitmaps are filled for part blocks only,
// by the runs that reach them.
#include <algorithm>
#include <bit>
#include <limits>

#include "engine/core/text_format.h"
#include "engine/layout/block_layout.h"

namespace stof::engine {

namespace {

// Attended cells per block column of one block row, from the runs of its rows, reported as
// stretches of block columns of equal count.
class BlockRowCounter {
 public:
  BlockRowCounter(int64_t block_cols, int64_t block_n)
      : m_block_n(block_n),
        m_points(static_cast<size_t>(block_cols), 0),
        m_levels(static_cast<size_t>(block_cols), 0),
        m_touched(static_cast<size_t>((block_cols + 63) / 64), 0) {}

  // One run [begin, end) of one row of the block row.
  void AddRun(int64_t begin, int64_t end) {
    const int64_t first = begin / m_block_n, last = (end - 1) / m_block_n;
    if (first == last) {
      Point(first, end - begin);
      return;
    }
    Point(first, (first + 1) * m_block_n - begin);
    Point(last, end - last * m_block_n);
    if (last > first + 1) {
      Level(first + 1, m_block_n);
      Level(last, -m_block_n);
    }
  }

  // Calls f(bc_begin, bc_end, cells) in column order for every stretch of block columns whose
  // blocks each hold `cells` > 0 attended cells, then forgets the runs. A stretch longer than
  // one block lies strictly inside some run (between its first and last block), so it never
  // holds the ragged last block column.
  template <class F>
  void Sweep(F&& f) {
    int64_t level = 0;
    for (int64_t w = m_lo; w <= m_hi; ++w) {
      while (m_touched[static_cast<size_t>(w)] != 0) {
        uint64_t& word = m_touched[static_cast<size_t>(w)];
        const int64_t c = w * 64 + std::countr_zero(word);
        word &= word - 1;
        level += m_levels[static_cast<size_t>(c)];
        const int64_t here = level + m_points[static_cast<size_t>(c)];
        m_levels[static_cast<size_t>(c)] = 0;
        m_points[static_cast<size_t>(c)] = 0;
        if (here > 0) f(c, c + 1, here);
        if (level > 0) {
          const int64_t next = NextTouched(w);  // exists: the level falls again at a run's end
          if (next > c + 1) f(c + 1, next, level);
        }
      }
    }
    m_lo = std::numeric_limits<int64_t>::max();
    m_hi = -1;
  }

 private:
  void Touch(int64_t c) {
    const int64_t w = c >> 6;
    m_touched[static_cast<size_t>(w)] |= uint64_t{1} << (c & 63);
    m_lo = std::min(m_lo, w);
    m_hi = std::max(m_hi, w);
  }
  void Point(int64_t c, int64_t cells) {
    m_points[static_cast<size_t>(c)] += cells;
    Touch(c);
  }
  void Level(int64_t c, int64_t delta) {
    m_levels[static_cast<size_t>(c)] += delta;
    Touch(c);
  }
  // The first touched column at or after word w (bits already swept are cleared).
  int64_t NextTouched(int64_t w) const {
    for (; w <= m_hi; ++w) {
      const uint64_t word = m_touched[static_cast<size_t>(w)];
      if (word != 0) return w * 64 + std::countr_zero(word);
    }
    return (m_hi + 1) * 64;
  }

  int64_t m_block_n;
  std::vector<int64_t> m_points;   // cells of runs that start or end in the column
  std::vector<int64_t> m_levels;   // change of the cells every column from here on gets
  std::vector<uint64_t> m_touched;  // columns with a point or a level change
  int64_t m_lo = std::numeric_limits<int64_t>::max(), m_hi = -1;  // touched word range
};

// Sets bits [from, to) of a word array.
void SetBits(uint64_t* words, int64_t from, int64_t to) {
  while (from < to) {
    const int64_t off = from & 63;
    const int64_t n = std::min<int64_t>(64 - off, to - from);
    const uint64_t bits = n == 64 ? ~uint64_t{0} : ((uint64_t{1} << n) - 1) << off;
    words[from >> 6] |= bits;
    from += n;
  }
}

bool GetBit(const uint64_t* words, int64_t i) { return (words[i >> 6] >> (i & 63)) & 1u; }

}  // namespace

Expected<BlockLayout> BlockLayout::Build(const RowRuns& runs, int64_t block_m, int64_t block_n) {
  STOF_RETURN_IF_ERROR(CheckBlockSize(block_m, block_n));
  if (runs.Empty()) {
    return MakeError("layout: row runs: is empty (" + Str(runs.Rows()) + " x " +
                     Str(runs.Cols()) + "); each side must be at least 1");
  }
  BlockLayout l = Shape(runs.Rows(), runs.Cols(), block_m, block_n);
  BlockRowCounter counter(l.m_block_cols, block_n);
  auto count_block_row = [&](int64_t br) {
    const int64_t r1 = std::min((br + 1) * block_m, l.m_rows);
    for (int64_t r = br * block_m; r < r1; ++r) {
      for (const ColumnRun& run : runs.Row(r)) counter.AddRun(run.begin, run.end);
    }
  };

  // Pass 1 (StatsOf): how many full and part blocks, so that every array is allocated once.
  STOF_ASSIGN_OR_RETURN(const LayoutStats counted, StatsOf(runs, block_m, block_n));
  const int64_t n_full = counted.full_blocks, n_part = counted.part_blocks;
  l.m_nnz = counted.nnz;
  // The CSR arrays are int32 (the kernels upload them as they are); the dense Build never
  // gets near this, (32768 / 16)^2 blocks in all.
  constexpr int64_t kMaxEntries = std::numeric_limits<int32_t>::max();
  if (n_full + n_part > kMaxEntries) {
    return MakeError("layout: row runs: " + Str(n_full + n_part) + " valid blocks at " +
                     Str(block_m) + " x " + Str(block_n) +
                     " exceed the int32 CSR indices (at most " + Str(kMaxEntries) +
                     "); use larger blocks");
  }

  // Pass 2: CSR arrays, then the part blocks' bits, one block row at a time.
  const int64_t bitmap_words = l.BitmapWords();
  l.Reserve(n_full, n_part);
  for (int64_t br = 0; br < l.m_block_rows; ++br) {
    count_block_row(br);
    counter.Sweep([&](int64_t a, int64_t e, int64_t cells) {
      const bool full = cells == l.CellsInRange(br, a);
      for (int64_t bc = a; bc < e; ++bc) {
        if (full) {
          l.AddFull(bc);
        } else {
          l.AddPart(bc, cells);
        }
      }
    });
    // Bits: each run sets its cells in the part blocks it reaches (found by binary search
    // in this block row's part columns); rows past the mask and columns past L stay zero.
    const auto part_begin = l.m_part_col_idx.begin() + l.m_part_row_ptr.back();
    const auto part_end = l.m_part_col_idx.end();
    if (part_begin != part_end) {
      const int64_t r0 = br * block_m, r1 = std::min(r0 + block_m, l.m_rows);
      for (int64_t r = r0; r < r1; ++r) {
        for (const ColumnRun& run : runs.Row(r)) {
          const auto last = static_cast<int32_t>((run.end - 1) / block_n);
          for (auto it = std::lower_bound(part_begin, part_end,
                                          static_cast<int32_t>(run.begin / block_n));
               it != part_end && *it <= last; ++it) {
            const int64_t c0 = int64_t{*it} * block_n;
            uint64_t* dst =
                l.m_part_bitmaps.data() + (it - l.m_part_col_idx.begin()) * bitmap_words;
            const int64_t pos = (r - r0) * block_n - c0;
            SetBits(dst, pos + std::max<int64_t>(run.begin, c0),
                    pos + std::min<int64_t>(run.end, c0 + block_n));
          }
        }
      }
    }
    l.EndBlockRow();
  }
  return l;
}

Expected<LayoutStats> BlockLayout::StatsOf(const RowRuns& runs, int64_t block_m,
                                           int64_t block_n) {
  STOF_RETURN_IF_ERROR(CheckBlockSize(block_m, block_n));
  if (runs.Empty()) {
    return MakeError("layout: row runs: is empty (" + Str(runs.Rows()) + " x " +
                     Str(runs.Cols()) + "); each side must be at least 1");
  }
  const BlockLayout l = Shape(runs.Rows(), runs.Cols(), block_m, block_n);
  BlockRowCounter counter(l.m_block_cols, block_n);
  int64_t nnz = 0, n_full = 0, n_part = 0, min_row = 0, max_row = 0;
  for (int64_t br = 0; br < l.m_block_rows; ++br) {
    const int64_t r1 = std::min((br + 1) * block_m, l.m_rows);
    for (int64_t r = br * block_m; r < r1; ++r) {
      for (const ColumnRun& run : runs.Row(r)) counter.AddRun(run.begin, run.end);
    }
    int64_t valid = 0;
    counter.Sweep([&](int64_t a, int64_t e, int64_t cells) {
      (cells == l.CellsInRange(br, a) ? n_full : n_part) += e - a;
      nnz += cells * (e - a);
      valid += e - a;
    });
    min_row = br == 0 ? valid : std::min(min_row, valid);
    max_row = br == 0 ? valid : std::max(max_row, valid);
  }
  // Three row-pointer arrays of block_rows + 1 entries, and the full, part and load columns.
  const int64_t entries = 3 * (l.m_block_rows + 1) + 2 * (n_full + n_part);
  return l.StatsFromCounts(nnz, n_full, n_part, entries, min_row, max_row);
}

RowRuns BlockLayout::ToRowRuns() const {
  if (m_rows == 0 || m_cols == 0) return RowRuns();
  RowRunsBuilder out(m_rows, m_cols);
  const int64_t bitmap_words = BitmapWords();
  for (int64_t r = 0; r < m_rows; ++r) {
    const int64_t br = r / m_block_m;
    const int64_t pos = (r - br * m_block_m) * m_block_n;  // the row's first bit in a bitmap
    for (int32_t k = m_load_row_ptr[static_cast<size_t>(br)];
         k < m_load_row_ptr[static_cast<size_t>(br) + 1]; ++k) {
      const int64_t c0 = int64_t{m_load_col_idx[static_cast<size_t>(k)]} * m_block_n;
      const int32_t p = m_load_part_idx[static_cast<size_t>(k)];
      if (p < 0) {
        out.Add(c0, c0 + m_block_n);  // clipped at L by the builder
        continue;
      }
      const uint64_t* bits = m_part_bitmaps.data() + int64_t{p} * bitmap_words;
      for (int64_t j = 0; j < m_block_n;) {
        if (!GetBit(bits, pos + j)) {
          ++j;
          continue;
        }
        const int64_t start = j;
        while (j < m_block_n && GetBit(bits, pos + j)) ++j;
        out.Add(c0 + start, c0 + j);
      }
    }
    out.EndRow();
  }
  return std::move(out).Finish();
}

}  // namespace stof::engine
