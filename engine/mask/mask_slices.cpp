// Slices and column intervals to RowRuns (mask_slices.h): a sweep down the rows, each row's
// runs from what covers it, never a rows x cols step.
#include "engine/mask/mask_slices.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <numeric>

namespace stof::engine {

namespace {

constexpr struct {
  SliceKind kind;
  const char* name;
} kSliceKinds[] = {{SliceKind::kFull, "full"},
                   {SliceKind::kCausal, "causal"},
                   {SliceKind::kInverseCausal, "inv_causal"},
                   {SliceKind::kBiCausal, "bi_causal"}};

// "slices[2].q_end: must be in 1..4096 and above q_begin 10, got 5"
Status CheckRange(const std::string& field, int64_t begin, int64_t end, int64_t limit,
                  const char* begin_name) {
  if (begin < 0 || begin >= limit)
    return MakeError(field + "_begin: must be in 0.." + std::to_string(limit - 1) + ", got " +
                     std::to_string(begin));
  if (end <= begin || end > limit)
    return MakeError(field + "_end: must be in 1.." + std::to_string(limit) + " and above " +
                     begin_name + " " + std::to_string(begin) + ", got " + std::to_string(end));
  return Status::Ok();
}

// The keys [begin, end) that row `i` of slice `s` (0-based within it) attends; empty when
// begin >= end.
std::pair<int64_t, int64_t> SliceRow(const MaskSlice& s, int64_t i) {
  const int64_t nq = s.q_end - s.q_begin, nk = s.k_end - s.k_begin;
  const int64_t last = i + (nk - nq);  // the causal rule's last key offset
  int64_t lo = 0, hi = nk;
  if (s.kind == SliceKind::kCausal || s.kind == SliceKind::kBiCausal) hi = std::min(nk, last + 1);
  if (s.kind == SliceKind::kInverseCausal || s.kind == SliceKind::kBiCausal) lo = i;
  return {s.k_begin + lo, s.k_begin + hi};
}

}  // namespace

const char* SliceKindName(SliceKind kind) {
  for (const auto& k : kSliceKinds)
    if (k.kind == kind) return k.name;
  return "?";
}

Expected<SliceKind> ParseSliceKind(const std::string& name, const std::string& what) {
  for (const auto& k : kSliceKinds)
    if (name == k.name) return k.kind;
  return Error{what + ": expected full, causal, inv_causal or bi_causal, got '" + name + "'"};
}

Expected<RowRuns> RowRunsFromSlices(int64_t rows, int64_t cols,
                                    const std::vector<MaskSlice>& slices) {
  STOF_RETURN_IF_ERROR(RowRuns::CheckSize(rows, cols, "slices"));
  for (size_t n = 0; n < slices.size(); ++n) {
    const MaskSlice& s = slices[n];
    const std::string at = "slices[" + std::to_string(n) + "].";
    STOF_RETURN_IF_ERROR(CheckRange(at + "q", s.q_begin, s.q_end, rows, "q_begin"));
    STOF_RETURN_IF_ERROR(CheckRange(at + "k", s.k_begin, s.k_end, cols, "k_begin"));
  }
  std::vector<size_t> by_start(slices.size());
  std::iota(by_start.begin(), by_start.end(), size_t{0});
  std::stable_sort(by_start.begin(), by_start.end(),
                   [&](size_t a, size_t b) { return slices[a].q_begin < slices[b].q_begin; });
  RowRunsBuilder out(rows, cols);
  std::vector<size_t> active;
  std::vector<std::pair<int64_t, int64_t>> keys;
  size_t next = 0;
  for (int64_t r = 0; r < rows; ++r) {
    while (next < by_start.size() && slices[by_start[next]].q_begin == r)
      active.push_back(by_start[next++]);
    std::erase_if(active, [&](size_t n) { return slices[n].q_end <= r; });
    keys.clear();
    for (size_t n : active) {
      const auto k = SliceRow(slices[n], r - slices[n].q_begin);
      if (k.first < k.second) keys.push_back(k);
    }
    std::sort(keys.begin(), keys.end());
    for (const auto& k : keys) out.Add(k.first, k.second);  // merges overlapping runs
    out.EndRow();
  }
  return std::move(out).Finish();
}

namespace {

// The attended columns of the current row as maximal runs (begin -> end), kept as columns
// become masked (Split) and attended again (Join).
class AttendedColumns {
 public:
  explicit AttendedColumns(int32_t cols) { m_runs.emplace(0, cols); }
  void Split(int32_t col) {
    auto it = std::prev(m_runs.upper_bound(col));
    const int32_t begin = it->first, end = it->second;
    m_runs.erase(it);
    if (begin < col) m_runs.emplace(begin, col);
    if (col + 1 < end) m_runs.emplace(col + 1, end);
  }
  void Join(int32_t col) {
    auto right = m_runs.find(col + 1);
    auto after = m_runs.lower_bound(col);
    const bool has_left = after != m_runs.begin() && std::prev(after)->second == col;
    if (has_left) {
      auto left = std::prev(after);
      left->second = right != m_runs.end() ? right->second : col + 1;
      if (right != m_runs.end()) m_runs.erase(right);
      return;
    }
    const int32_t end = right != m_runs.end() ? right->second : col + 1;
    if (right != m_runs.end()) m_runs.erase(right);
    m_runs.emplace(col, end);
  }
  void AddRow(RowRunsBuilder& out) const {
    for (const auto& [begin, end] : m_runs) out.Add(begin, end);
    out.EndRow();
  }

 private:
  std::map<int32_t, int32_t> m_runs;
};

Status CheckColumnVector(const std::vector<int64_t>& v, const char* name, int64_t rows,
                         int64_t cols) {
  if (static_cast<int64_t>(v.size()) != cols)
    return MakeError(std::string("column intervals: ") + name + ": has " +
                     std::to_string(v.size()) + " values, expected one per column (" +
                     std::to_string(cols) + ")");
  for (size_t j = 0; j < v.size(); ++j)
    if (v[j] < 0 || v[j] > rows)
      return MakeError(std::string("column intervals: ") + name + "[" + std::to_string(j) +
                       "]: must be in 0.." + std::to_string(rows) + ", got " +
                       std::to_string(v[j]));
  return Status::Ok();
}

}  // namespace

Expected<RowRuns> RowRunsFromColumnIntervals(int64_t rows, int64_t cols,
                                             const ColumnIntervals& masked) {
  STOF_RETURN_IF_ERROR(RowRuns::CheckSize(rows, cols, "column intervals"));
  STOF_RETURN_IF_ERROR(CheckColumnVector(masked.lower_begin, "lower_begin", rows, cols));
  STOF_RETURN_IF_ERROR(CheckColumnVector(masked.lower_end, "lower_end", rows, cols));
  STOF_RETURN_IF_ERROR(CheckColumnVector(masked.upper_begin, "upper_begin", rows, cols));
  STOF_RETURN_IF_ERROR(CheckColumnVector(masked.upper_end, "upper_end", rows, cols));
  // Each column's masked ranges as +1 / -1 events at their rows, bucketed by row.
  struct Event {
    int32_t col;
    int32_t delta;
  };
  std::vector<int64_t> start(static_cast<size_t>(rows) + 1, 0);
  const auto each_range = [&](auto&& fn) {
    for (int64_t j = 0; j < cols; ++j) {
      const auto u = static_cast<size_t>(j);
      if (masked.lower_begin[u] < masked.lower_end[u])
        fn(j, masked.lower_begin[u], masked.lower_end[u]);
      if (masked.upper_begin[u] < masked.upper_end[u])
        fn(j, masked.upper_begin[u], masked.upper_end[u]);
    }
  };
  each_range([&](int64_t, int64_t b, int64_t e) {
    ++start[static_cast<size_t>(b)];
    if (e < rows) ++start[static_cast<size_t>(e)];
  });
  int64_t total = 0;
  for (int64_t& s : start) total += std::exchange(s, total);
  std::vector<Event> events(static_cast<size_t>(total));
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  each_range([&](int64_t j, int64_t b, int64_t e) {
    events[static_cast<size_t>(fill[static_cast<size_t>(b)]++)] = {static_cast<int32_t>(j), 1};
    if (e < rows)
      events[static_cast<size_t>(fill[static_cast<size_t>(e)]++)] = {static_cast<int32_t>(j), -1};
  });
  std::vector<uint8_t> depth(static_cast<size_t>(cols), 0);  // masked ranges over a column
  AttendedColumns attended(static_cast<int32_t>(cols));
  RowRunsBuilder out(rows, cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t n = start[static_cast<size_t>(r)]; n < start[static_cast<size_t>(r) + 1]; ++n) {
      const Event ev = events[static_cast<size_t>(n)];
      uint8_t& d = depth[static_cast<size_t>(ev.col)];
      const uint8_t before = d;
      d = static_cast<uint8_t>(d + ev.delta);
      if (before == 0 && d > 0) attended.Split(ev.col);
      if (before > 0 && d == 0) attended.Join(ev.col);
    }
    attended.AddRow(out);
  }
  return std::move(out).Finish();
}

}  // namespace stof::engine
