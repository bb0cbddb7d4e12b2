// RowRuns storage, validation of raw runs, conversion from and to Mask, and/or/not, counts
// (row_runs.h holds the invariants; FromSpec is in row_runs_spec.cpp). Each operation walks
// the runs of a row once, so costs grow with the runs, not with rows x cols.
#include "engine/mask/row_runs.h"

#include <algorithm>
#include <bit>
#include <iterator>

#include "engine/core/text_format.h"

namespace stof::engine {

namespace {

Status CheckSide(const std::string& what, const char* field, int64_t v) {
  if (v >= 1 && v <= RowRuns::kMaxLen) return Status::Ok();
  return MakeError(what + ": " + field + ": must be in 1.." + Str(RowRuns::kMaxLen) + ", got " +
                   Str(v));
}

Status CheckSameShape(const RowRuns& a, const RowRuns& b, const char* op) {
  if (a.Rows() == b.Rows() && a.Cols() == b.Cols()) return Status::Ok();
  return MakeError(std::string("row runs ") + op + ": shapes differ (" + Str(a.Rows()) + " x " +
                   Str(a.Cols()) + " vs " + Str(b.Rows()) + " x " + Str(b.Cols()) + ")");
}

// Index of the first set bit of `row` at or after column c (with `want` = true), or of the
// first clear bit (want = false); `words` words per row. Returns words * 64 when there is none.
int64_t NextBit(const uint64_t* row, int64_t words, int64_t c, bool want) {
  int64_t w = c >> 6;
  if (w >= words) return words * 64;
  uint64_t x = (want ? row[w] : ~row[w]) & (~uint64_t{0} << (c & 63));
  while (x == 0) {
    if (++w == words) return words * 64;
    x = want ? row[w] : ~row[w];
  }
  return w * 64 + std::countr_zero(x);
}

}  // namespace

RowRunsBuilder::RowRunsBuilder(int64_t rows, int64_t cols) {
  m_out.m_rows = rows;
  m_out.m_cols = cols;
  m_out.m_row_ptr.reserve(static_cast<size_t>(rows) + 1);
}

void RowRunsBuilder::Add(int64_t begin, int64_t end) {
  begin = std::max<int64_t>(begin, 0);
  end = std::min(end, m_out.m_cols);
  if (begin >= end) return;
  auto& runs = m_out.m_runs;
  if (static_cast<int64_t>(runs.size()) > m_row_start && begin <= runs.back().end) {
    runs.back().end = std::max(runs.back().end, static_cast<int32_t>(end));
    return;
  }
  runs.push_back({static_cast<int32_t>(begin), static_cast<int32_t>(end)});
}

void RowRunsBuilder::EndRow() {
  m_row_start = static_cast<int64_t>(m_out.m_runs.size());
  m_out.m_row_ptr.push_back(m_row_start);
}

RowRuns RowRunsBuilder::Finish() && { return std::move(m_out); }

Status RowRuns::CheckSize(int64_t rows, int64_t cols, const std::string& what) {
  STOF_RETURN_IF_ERROR(CheckSide(what, "rows", rows));
  return CheckSide(what, "cols", cols);
}

Expected<RowRuns> RowRuns::Create(int64_t rows, int64_t cols, const std::string& what) {
  STOF_RETURN_IF_ERROR(CheckSize(rows, cols, what));
  RowRuns r;
  r.m_rows = rows;
  r.m_cols = cols;
  r.m_row_ptr.assign(static_cast<size_t>(rows) + 1, 0);
  return r;
}

Expected<RowRuns> RowRuns::FromRuns(int64_t rows, int64_t cols, std::vector<int64_t> row_ptr,
                                    std::vector<ColumnRun> runs, const std::string& what) {
  STOF_RETURN_IF_ERROR(CheckSize(rows, cols, what));
  if (static_cast<int64_t>(row_ptr.size()) != rows + 1) {
    return MakeError(what + ": row_ptr: expected rows + 1 = " + Str(rows + 1) +
                     " entries, got " + Str(static_cast<int64_t>(row_ptr.size())));
  }
  if (row_ptr.front() != 0) {
    return MakeError(what + ": row_ptr[0]: must be 0, got " + Str(row_ptr.front()));
  }
  const int64_t n_runs = static_cast<int64_t>(runs.size());
  if (row_ptr.back() != n_runs) {
    return MakeError(what + ": row_ptr[" + Str(rows) + "]: must be the run count " +
                     Str(n_runs) + ", got " + Str(row_ptr.back()));
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b = row_ptr[static_cast<size_t>(r)], e = row_ptr[static_cast<size_t>(r) + 1];
    if (e < b || e > n_runs) {
      return MakeError(what + ": row_ptr[" + Str(r + 1) + "]: must be in " + Str(b) + ".." +
                       Str(n_runs) + " (non-decreasing, at most the run count), got " + Str(e));
    }
    for (int64_t k = b; k < e; ++k) {
      const ColumnRun& run = runs[static_cast<size_t>(k)];
      const std::string at = what + ": runs[" + Str(k) + "] (row " + Str(r) + "): ";
      if (run.begin < 0 || run.end > cols) {
        return MakeError(at + "[" + Str(run.begin) + ", " + Str(run.end) +
                         ") is outside the columns [0, " + Str(cols) + ")");
      }
      if (run.begin >= run.end) {
        return MakeError(at + "[" + Str(run.begin) + ", " + Str(run.end) +
                         ") is empty; begin must be below end");
      }
      if (k > b && run.begin <= runs[static_cast<size_t>(k) - 1].end) {
        return MakeError(at + "begin " + Str(run.begin) + " is not after the previous run's end " +
                         Str(runs[static_cast<size_t>(k) - 1].end) +
                         "; runs must be sorted, disjoint and not touching");
      }
    }
  }
  RowRuns out;
  out.m_rows = rows;
  out.m_cols = cols;
  out.m_row_ptr = std::move(row_ptr);
  out.m_runs = std::move(runs);
  return out;
}

RowRuns RowRuns::FromMask(const Mask& mask) {
  if (mask.Empty()) return RowRuns();
  const int64_t cols = mask.Cols(), words = mask.WordsPerRow();
  RowRunsBuilder b(mask.Rows(), cols);
  for (int64_t r = 0; r < mask.Rows(); ++r) {
    const uint64_t* row = mask.RowWords(r);
    // Padding bits past cols are zero, so a run never reaches past cols except as a clear bit.
    for (int64_t c = NextBit(row, words, 0, true); c < cols;) {
      const int64_t end = std::min(NextBit(row, words, c, false), cols);
      b.Add(c, end);
      c = NextBit(row, words, end, true);
    }
    b.EndRow();
  }
  return std::move(b).Finish();
}

int64_t RowRuns::CountRuns(const Mask& mask) {
  int64_t runs = 0;
  const int64_t words = mask.WordsPerRow();
  for (int64_t r = 0; r < mask.Rows(); ++r) {
    const uint64_t* row = mask.RowWords(r);
    uint64_t carry = 0;  // the previous word's top bit, as bit 0
    for (int64_t w = 0; w < words; ++w) {
      runs += std::popcount(row[w] & ~((row[w] << 1) | carry));
      carry = row[w] >> 63;
    }
  }
  return runs;
}

Expected<Mask> RowRuns::ToMask() const {
  if (Empty()) return Mask();
  STOF_ASSIGN_OR_RETURN(Mask m, Mask::Create(m_rows, m_cols, "row runs to a dense mask"));
  for (int64_t r = 0; r < m_rows; ++r) {
    for (const ColumnRun& run : Row(r)) m.SetRange(r, run.begin, run.end);
  }
  return m;
}

Expected<Mask> RowRuns::LastRowsToMask(int64_t rows, const std::string& what) const {
  if (rows < 1 || rows > m_rows)
    return MakeError(what + ": expected 1.." + std::to_string(m_rows) +
                     " (the mask's rows), got " + std::to_string(rows));
  STOF_ASSIGN_OR_RETURN(Mask m, Mask::Create(rows, m_cols, what));
  const int64_t r0 = m_rows - rows;
  for (int64_t r = 0; r < rows; ++r) {
    for (const ColumnRun& run : Row(r0 + r)) m.SetRange(r, run.begin, run.end);
  }
  return m;
}

namespace {

// a and b row by row: per_row(a's row, b's row, out) adds the row's runs in begin order.
template <class PerRow>
Expected<RowRuns> Combine(const RowRuns& a, const RowRuns& b, const char* op, PerRow per_row) {
  STOF_RETURN_IF_ERROR(CheckSameShape(a, b, op));
  RowRunsBuilder out(a.Rows(), a.Cols());
  for (int64_t r = 0; r < a.Rows(); ++r) {
    per_row(a.Row(r), b.Row(r), out);
    out.EndRow();
  }
  return std::move(out).Finish();
}

}  // namespace

Expected<RowRuns> RowRuns::Or(const RowRuns& a, const RowRuns& b) {
  return Combine(a, b, "or", [](auto ra, auto rb, RowRunsBuilder& out) {
    // Merge by begin; Add joins what overlaps or touches.
    size_t i = 0, j = 0;
    while (i < ra.size() || j < rb.size()) {
      const bool take_a = j == rb.size() || (i < ra.size() && ra[i].begin <= rb[j].begin);
      const ColumnRun& run = take_a ? ra[i++] : rb[j++];
      out.Add(run.begin, run.end);
    }
  });
}

Expected<RowRuns> RowRuns::And(const RowRuns& a, const RowRuns& b) {
  return Combine(a, b, "and", [](auto ra, auto rb, RowRunsBuilder& out) {
    size_t i = 0, j = 0;
    while (i < ra.size() && j < rb.size()) {
      out.Add(std::max(ra[i].begin, rb[j].begin), std::min(ra[i].end, rb[j].end));
      // The run that ends first can meet nothing further on the other side.
      if (ra[i].end < rb[j].end) {
        ++i;
      } else {
        ++j;
      }
    }
  });
}

RowRuns RowRuns::Not(const RowRuns& a) {
  if (a.Empty()) return RowRuns();
  RowRunsBuilder out(a.m_rows, a.m_cols);
  for (int64_t r = 0; r < a.m_rows; ++r) {
    int64_t c = 0;
    for (const ColumnRun& run : a.Row(r)) {
      out.Add(c, run.begin);
      c = run.end;
    }
    out.Add(c, a.m_cols);
    out.EndRow();
  }
  return std::move(out).Finish();
}

bool RowRuns::Get(int64_t row, int64_t col) const {
  if (row < 0 || row >= m_rows || col < 0 || col >= m_cols) return false;
  const auto runs = Row(row);
  // The last run beginning at or before col is the only one that can hold it.
  const auto it = std::upper_bound(runs.begin(), runs.end(), col,
                                   [](int64_t c, const ColumnRun& run) { return c < run.begin; });
  return it != runs.begin() && col < std::prev(it)->end;
}

int64_t RowRuns::CountRow(int64_t row) const {
  int64_t n = 0;
  for (const ColumnRun& run : Row(row)) n += run.end - run.begin;
  return n;
}

int64_t RowRuns::Count() const {
  int64_t n = 0;
  for (const ColumnRun& run : m_runs) n += run.end - run.begin;
  return n;
}

int64_t RowRuns::MemoryBytes() const {
  return static_cast<int64_t>(m_row_ptr.size() * sizeof(int64_t) +
                              m_runs.size() * sizeof(ColumnRun));
}

}  // namespace stof::engine
