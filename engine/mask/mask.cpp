// Mask storage, counting, hashing and composition. See mask.h for the invariants.
#include "engine/mask/mask.h"

#include <algorithm>
#include <bit>
#include <cstdio>

#include "engine/core/fnv1a.h"

namespace stof::engine {

Status Mask::CheckSize(int64_t rows, int64_t cols, const std::string& what) {
  if (rows < 1 || cols < 1) {
    return MakeError(what + ": size " + std::to_string(rows) + " x " + std::to_string(cols) +
                     " is empty; each side must be at least 1");
  }
  if (rows > kMaxSide || cols > kMaxSide || rows * cols > kMaxCells) {
    return MakeError(what + ": size " + std::to_string(rows) + " x " + std::to_string(cols) +
                     " is too large; a square mask must be at most " + std::to_string(kMaxLen) +
                     " on a side, and any mask at most " + std::to_string(kMaxSide) +
                     " on a side and " + std::to_string(kMaxLen) + " x " +
                     std::to_string(kMaxLen) + " cells");
  }
  return Status::Ok();
}

Expected<Mask> Mask::Create(int64_t rows, int64_t cols, const std::string& what) {
  STOF_RETURN_IF_ERROR(CheckSize(rows, cols, what));
  Mask m;
  m.m_rows = rows;
  m.m_cols = cols;
  m.m_words_per_row = (cols + 63) / 64;
  m.m_words.assign(static_cast<size_t>(rows * m.m_words_per_row), 0);
  return m;
}

Expected<Mask> Mask::LastRows(int64_t rows, const std::string& what) const {
  if (rows < 1 || rows > m_rows)
    return MakeError(what + ": expected 1.." + std::to_string(m_rows) +
                     " (the mask's rows), got " + std::to_string(rows));
  STOF_ASSIGN_OR_RETURN(Mask out, Create(rows, m_cols, what));
  std::copy(m_words.end() - rows * m_words_per_row, m_words.end(), out.m_words.begin());
  return out;
}

void Mask::SetRange(int64_t r, int64_t c0, int64_t c1, bool v) {
  if (r < 0 || r >= m_rows) return;
  if (c0 < 0) c0 = 0;
  if (c1 > m_cols) c1 = m_cols;
  if (c0 >= c1) return;
  uint64_t* row = RowWords(r);
  int64_t w0 = c0 >> 6, w1 = (c1 - 1) >> 6;
  for (int64_t w = w0; w <= w1; ++w) {
    int64_t lo = (w == w0) ? (c0 & 63) : 0;
    int64_t hi = (w == w1) ? ((c1 - 1) & 63) : 63;  // inclusive
    uint64_t bits = (hi == 63 ? ~uint64_t{0} : ((uint64_t{1} << (hi + 1)) - 1)) &
                    ~((uint64_t{1} << lo) - 1);
    row[w] = v ? (row[w] | bits) : (row[w] & ~bits);
  }
}

void Mask::SetRect(int64_t r0, int64_t r1, int64_t c0, int64_t c1, bool v) {
  if (r0 < 0) r0 = 0;
  if (r1 > m_rows) r1 = m_rows;
  for (int64_t r = r0; r < r1; ++r) SetRange(r, c0, c1, v);
}

int64_t Mask::CountRow(int64_t r) const {
  int64_t n = 0;
  const uint64_t* row = RowWords(r);
  for (int64_t w = 0; w < m_words_per_row; ++w) n += std::popcount(row[w]);
  return n;
}

int64_t Mask::CountRect(int64_t r0, int64_t r1, int64_t c0, int64_t c1) const {
  if (r0 < 0) r0 = 0;
  if (r1 > m_rows) r1 = m_rows;
  if (c0 < 0) c0 = 0;
  if (c1 > m_cols) c1 = m_cols;
  if (r0 >= r1 || c0 >= c1) return 0;
  int64_t w0 = c0 >> 6, w1 = (c1 - 1) >> 6;
  int64_t n = 0;
  for (int64_t r = r0; r < r1; ++r) {
    const uint64_t* row = RowWords(r);
    for (int64_t w = w0; w <= w1; ++w) {
      int64_t lo = (w == w0) ? (c0 & 63) : 0;
      int64_t hi = (w == w1) ? ((c1 - 1) & 63) : 63;
      uint64_t bits = (hi == 63 ? ~uint64_t{0} : ((uint64_t{1} << (hi + 1)) - 1)) &
                      ~((uint64_t{1} << lo) - 1);
      n += std::popcount(row[w] & bits);
    }
  }
  return n;
}

int64_t Mask::Count() const {
  int64_t n = 0;
  for (uint64_t w : m_words) n += std::popcount(w);
  return n;
}

double Mask::Density() const {
  if (Empty()) return 0.0;
  return static_cast<double>(Count()) / (static_cast<double>(m_rows) * static_cast<double>(m_cols));
}

uint64_t Mask::Hash() const {
  // The basis is one digit short of FNV's 14695981039346656037; plans store the hash, so it
  // stays as it was first written.
  uint64_t h = 1469598103934665603ull;
  h = Fnv1aMix(h, static_cast<uint64_t>(m_rows));
  h = Fnv1aMix(h, static_cast<uint64_t>(m_cols));
  for (uint64_t w : m_words) h = Fnv1aMix(h, w);
  return h;
}

std::string Mask::HashHex() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(Hash()));
  return buf;
}

namespace {
Status CheckSameShape(const Mask& a, const Mask& b, const char* op) {
  if (a.Rows() == b.Rows() && a.Cols() == b.Cols()) return Status::Ok();
  return MakeError(std::string("mask ") + op + ": shapes differ (" + std::to_string(a.Rows()) +
                   " x " + std::to_string(a.Cols()) + " vs " + std::to_string(b.Rows()) + " x " +
                   std::to_string(b.Cols()) + ")");
}
}  // namespace

Expected<Mask> Mask::Or(const Mask& a, const Mask& b) {
  STOF_RETURN_IF_ERROR(CheckSameShape(a, b, "or"));
  Mask m = a;
  for (size_t i = 0; i < m.m_words.size(); ++i) m.m_words[i] |= b.m_words[i];
  return m;
}

Expected<Mask> Mask::And(const Mask& a, const Mask& b) {
  STOF_RETURN_IF_ERROR(CheckSameShape(a, b, "and"));
  Mask m = a;
  for (size_t i = 0; i < m.m_words.size(); ++i) m.m_words[i] &= b.m_words[i];
  return m;
}

Mask Mask::Not(const Mask& a) {
  Mask m = a;
  for (uint64_t& w : m.m_words) w = ~w;
  m.ClearPadding();
  return m;
}

void Mask::ClearPadding() {
  if (m_cols % 64 == 0) return;
  const uint64_t keep = (uint64_t{1} << (m_cols % 64)) - 1;
  for (int64_t r = 0; r < m_rows; ++r) m_words[r * m_words_per_row + m_words_per_row - 1] &= keep;
}

}  // namespace stof::engine
