// Mask: a bit-packed L_q x L_k boolean attention mask (true = attend), row-major,
// 64-bit words, each row padded to whole words (padding bits are always zero).
// Used by every layer above: generators, I/O, BlockLayout, kernel selection, plans, the GUI.
// Invariant: 0 <= rows, cols <= kMaxSide and rows x cols <= kMaxCells = kMaxLen^2: memory is
// at most kMaxLen^2 / 8 bytes (128 MiB), a square mask at most kMaxLen on a side.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/core/workload.h"

namespace stof::engine {

class Mask {
 public:
  // Largest supported sequence length, the workload's (core/workload.h, which owns the number
  // so that core needs nothing of mask/). 32768^2 bits = 128 MiB; anything bigger is refused
  // before allocating so a bad file or parameter never asks for unbounded memory.
  static constexpr int64_t kMaxLen = Workload::kMaxSeqLen;
  // A mask of fewer rows than columns (a KV cache's last query rows) may be longer: up to
  // kMaxSide on a side within the same kMaxCells (a decode row over 262144 keys).
  static constexpr int64_t kMaxSide = Workload::kMaxKeyLen;
  static constexpr int64_t kMaxCells = Workload::kMaxCells;

  Mask() = default;  // 0 x 0

  // An all-false rows x cols mask; fails (naming `what`) when a side is < 1 or > kMaxSide, or
  // rows x cols > kMaxCells.
  static Expected<Mask> Create(int64_t rows, int64_t cols, const std::string& what = "mask");
  // Checks a size pair without allocating; same messages as Create.
  static Status CheckSize(int64_t rows, int64_t cols, const std::string& what = "mask");

  int64_t Rows() const { return m_rows; }
  int64_t Cols() const { return m_cols; }
  int64_t WordsPerRow() const { return m_words_per_row; }
  bool Empty() const { return m_rows == 0 || m_cols == 0; }

  bool Get(int64_t r, int64_t c) const {
    return (m_words[r * m_words_per_row + (c >> 6)] >> (c & 63)) & 1u;
  }
  void Set(int64_t r, int64_t c, bool v = true) {
    uint64_t& w = m_words[r * m_words_per_row + (c >> 6)];
    const uint64_t bit = uint64_t{1} << (c & 63);
    w = v ? (w | bit) : (w & ~bit);
  }
  // Sets columns [c0, c1) of row r (clamped to the mask) to v, a word at a time.
  void SetRange(int64_t r, int64_t c0, int64_t c1, bool v = true);
  // Sets the rectangle rows [r0, r1) x cols [c0, c1) (clamped) to v.
  void SetRect(int64_t r0, int64_t r1, int64_t c0, int64_t c1, bool v = true);

  const uint64_t* RowWords(int64_t r) const { return m_words.data() + r * m_words_per_row; }
  uint64_t* RowWords(int64_t r) { return m_words.data() + r * m_words_per_row; }
  const std::vector<uint64_t>& Words() const { return m_words; }

  int64_t CountRow(int64_t r) const;  // attended elements in row r
  // Attended elements in rows [r0, r1) x cols [c0, c1) (clamped).
  int64_t CountRect(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const;
  int64_t Count() const;              // nnz
  double Density() const;             // nnz / (rows * cols); 0 for an empty mask
  double Sparsity() const { return 1.0 - Density(); }

  // FNV-1a 64 of the dimensions and the words: equal masks have equal hashes. Plans store it
  // (as 16 hex digits, see HashHex) to refuse replays on a different mask.
  uint64_t Hash() const;
  std::string HashHex() const;

  // The last `rows` rows (all columns): the rows of a KV cache's `rows` newest query positions
  // over a square mask of every position (causal then aligned to the bottom right). Errors
  // name `what` when rows is not in 1..Rows().
  Expected<Mask> LastRows(int64_t rows, const std::string& what = "q_len") const;

  // Element-wise composition; sizes must match (error names both shapes).
  static Expected<Mask> Or(const Mask& a, const Mask& b);
  static Expected<Mask> And(const Mask& a, const Mask& b);
  static Mask Not(const Mask& a);

  bool operator==(const Mask& o) const {
    return m_rows == o.m_rows && m_cols == o.m_cols && m_words == o.m_words;
  }
  bool operator!=(const Mask& o) const { return !(*this == o); }

 private:
  void ClearPadding();

  int64_t m_rows = 0;
  int64_t m_cols = 0;
  int64_t m_words_per_row = 0;
  std::vector<uint64_t> m_words;
};

}  // namespace stof::engine
