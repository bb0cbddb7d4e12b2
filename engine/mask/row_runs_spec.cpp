// RowRuns::FromSpec / FromSpecRows / LastRowsOfSpec: every MaskSpec generator written row by
// row as column runs, never as L x L bits (FromSpecRows: only a range of rows, as a KV cache's
// last rows). The definitions are mask_spec.cpp's (docs/masks.md, "Patterns"); the tests
// (tests/engine/row_runs_spec_test.cpp) hold this file to FromMask(Generate(spec)) for every
// pattern. A row's few runs (full, causal, band, global, document) and its many sorted ones
// (dilated cells, the block row's random blocks) are merged in begin order into the builder;
// random blocks are drawn by the same loop as Generate's (random_blocks.h), with the
// "left empty by global + band" test done on the block's bounds instead of on bits.
#include <algorithm>
#include <utility>

#include "engine/core/text_format.h"
#include "engine/mask/mask_pattern.h"
#include "engine/mask/mask_spec.h"
#include "engine/mask/random_blocks.h"
#include "engine/mask/row_runs.h"

namespace stof::engine {

namespace {

// The chosen blocks of block row bi as column runs, adjacent blocks joined.
void BlockRowRuns(const MaskSpec& s, const ChosenBlocks& chosen, int64_t bi,
                  std::vector<ColumnRun>& out) {
  out.clear();
  const int64_t b = s.block;
  for (int64_t k = chosen.row_ptr[static_cast<size_t>(bi)];
       k < chosen.row_ptr[static_cast<size_t>(bi) + 1]; ++k) {
    const int64_t c0 = chosen.cols[static_cast<size_t>(k)] * b;
    const auto c1 = static_cast<int32_t>(std::min(c0 + b, s.seq_len));
    if (!out.empty() && out.back().end == c0) {
      out.back().end = c1;
    } else {
      out.push_back({static_cast<int32_t>(c0), c1});
    }
  }
}

// A row's runs from at most two unordered ones (`few`) and any number in increasing order
// (`many`), cut at `cap` (i + 1 under the causal flag), added in begin order.
struct RowParts {
  ColumnRun few[2];
  int n_few = 0;
  void AddFew(int64_t begin, int64_t end, int64_t cols) {
    begin = std::max<int64_t>(begin, 0);
    end = std::min(end, cols);
    if (begin < end) few[n_few++] = {static_cast<int32_t>(begin), static_cast<int32_t>(end)};
  }
  void Emit(const std::vector<ColumnRun>& many, int64_t cap, RowRunsBuilder& out) {
    if (n_few == 2 && few[1].begin < few[0].begin) std::swap(few[0], few[1]);
    int f = 0;
    size_t k = 0;
    while (f < n_few || k < many.size()) {
      const bool take_few = k == many.size() || (f < n_few && few[f].begin <= many[k].begin);
      const ColumnRun& run = take_few ? few[f++] : many[k++];
      out.Add(run.begin, std::min<int64_t>(run.end, cap));
    }
  }
};

// i < g or j < g.
void AddGlobal(RowParts& parts, const MaskSpec& s, int64_t i) {
  if (s.global <= 0) return;
  parts.AddFew(0, i < s.global ? s.seq_len : s.global, s.seq_len);
}

// |i - j| < w.
void AddBand(RowParts& parts, const MaskSpec& s, int64_t i) {
  parts.AddFew(i - s.width + 1, i + s.width, s.seq_len);
}

// j = i + k (r + 1) for |k| < w, one cell each (r >= 1 keeps them apart).
void DilatedCells(const MaskSpec& s, int64_t i, std::vector<ColumnRun>& out) {
  out.clear();
  const int64_t step = s.dilation + 1;
  for (int64_t k = -(s.width - 1); k <= s.width - 1; ++k) {
    const int64_t j = i + k * step;
    if (j >= 0 && j < s.seq_len) {
      out.push_back({static_cast<int32_t>(j), static_cast<int32_t>(j + 1)});
    }
  }
}

// The rows [first, first + rows) of the spec's mask, row first + r as row r of the result.
struct RowRange {
  int64_t first, rows;
};

Expected<RowRuns> BuildAtomic(const MaskSpec& s, MaskPattern p, const std::string& path,
                              RowRange range) {
  const int64_t L = s.seq_len;
  ChosenBlocks chosen;
  if (p == MaskPattern::kRandomBlocks || p == MaskPattern::kBigBird) {
    STOF_ASSIGN_OR_RETURN(chosen, ChooseRandomBlocks(s, p == MaskPattern::kBigBird, path));
  }
  RowRunsBuilder out(range.rows, L);
  std::vector<ColumnRun> many;       // dilated cells, or the block row's random blocks
  int64_t many_block_row = -1;       // the block row `many` holds for random blocks
  size_t doc = 0;
  int64_t doc_start = 0;
  for (int64_t i = range.first; i < range.first + range.rows; ++i) {
    RowParts parts;
    const bool random = p == MaskPattern::kRandomBlocks || p == MaskPattern::kBigBird;
    if (random && i / s.block != many_block_row) {
      many_block_row = i / s.block;
      BlockRowRuns(s, chosen, many_block_row, many);
    }
    switch (p) {
      case MaskPattern::kFull: parts.AddFew(0, L, L); break;
      case MaskPattern::kCausal: parts.AddFew(0, i + 1, L); break;
      case MaskPattern::kSlidingWindow: AddBand(parts, s, i); break;
      case MaskPattern::kDilated:
        if (s.dilation == 0) {
          AddBand(parts, s, i);
        } else {
          DilatedCells(s, i, many);
        }
        break;
      case MaskPattern::kGlobal: AddGlobal(parts, s, i); break;
      case MaskPattern::kRandomBlocks: break;  // `many` alone
      case MaskPattern::kLongformer:
      case MaskPattern::kBigBird:
        AddGlobal(parts, s, i);
        AddBand(parts, s, i);
        break;
      case MaskPattern::kDocument:
        while (i >= doc_start + s.doc_lengths[doc]) doc_start += s.doc_lengths[doc++];
        parts.AddFew(doc_start, doc_start + s.doc_lengths[doc], L);
        break;
      default: break;  // compositions are built by BuildComposition
    }
    parts.Emit(many, s.causal ? i + 1 : L, out);
    out.EndRow();
  }
  return std::move(out).Finish();
}

// j <= i on every row, after everything else (the causal flag of a composition); row r of `a`
// is row first + r of the mask.
RowRuns ApplyCausal(const RowRuns& a, int64_t first) {
  RowRunsBuilder out(a.Rows(), a.Cols());
  for (int64_t r = 0; r < a.Rows(); ++r) {
    for (const ColumnRun& run : a.Row(r))
      out.Add(run.begin, std::min<int64_t>(run.end, first + r + 1));
    out.EndRow();
  }
  return std::move(out).Finish();
}

Expected<RowRuns> Build(const MaskSpec& s, const std::string& path, RowRange range);

Expected<RowRuns> BuildComposition(const MaskSpec& s, MaskPattern p, const std::string& path,
                                   RowRange range) {
  STOF_ASSIGN_OR_RETURN(RowRuns acc, Build(s.operands[0], path + ".operands[0]", range));
  if (p == MaskPattern::kNot) return RowRuns::Not(acc);
  for (size_t i = 1; i < s.operands.size(); ++i) {
    STOF_ASSIGN_OR_RETURN(
        RowRuns next, Build(s.operands[i], path + ".operands[" + std::to_string(i) + "]", range));
    STOF_ASSIGN_OR_RETURN(acc, p == MaskPattern::kOr ? RowRuns::Or(acc, next)
                                                     : RowRuns::And(acc, next));
  }
  return acc;
}

Expected<RowRuns> Build(const MaskSpec& s, const std::string& path, RowRange range) {
  const MaskPattern p = MaskPatternFromName(s.pattern);
  if (!IsCompositionPattern(p)) return BuildAtomic(s, p, path, range);
  STOF_ASSIGN_OR_RETURN(RowRuns m, BuildComposition(s, p, path, range));
  return s.causal ? ApplyCausal(m, range.first) : m;
}

}  // namespace

Expected<RowRuns> RowRuns::FromSpec(const MaskSpec& spec) {
  STOF_ASSIGN_OR_RETURN(auto resolved, Resolve(spec, kMaxLen));
  return Build(resolved, "mask", RowRange{0, resolved.seq_len});
}

Expected<RowRuns> RowRuns::FromSpecRows(const MaskSpec& spec, int64_t first_row, int64_t rows,
                                        const std::string& what) {
  STOF_ASSIGN_OR_RETURN(auto resolved, Resolve(spec, kMaxLen));
  const int64_t L = resolved.seq_len;
  if (rows < 1 || rows > L)
    return MakeError(what + ": expected 1.." + Str(L) + " (the mask's rows), got " + Str(rows));
  if (first_row < 0 || first_row > L - rows)
    return MakeError(what + ": rows " + Str(first_row) + ".." + Str(first_row + rows - 1) +
                     " are not all inside the " + Str(L) + "-long mask");
  return Build(resolved, "mask", RowRange{first_row, rows});
}

Expected<Mask> RowRuns::LastRowsOfSpec(const MaskSpec& spec, int64_t rows,
                                       const std::string& what) {
  STOF_ASSIGN_OR_RETURN(auto resolved, Resolve(spec, kMaxLen));
  STOF_ASSIGN_OR_RETURN(RowRuns runs,
                        FromSpecRows(resolved, resolved.seq_len - rows, rows, what));
  return runs.LastRowsToMask(rows, what);
}

}  // namespace stof::engine
