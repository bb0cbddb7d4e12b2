// Mask generators: Resolve (defaults + validation) and Generate for every pattern of
// mask_spec.h. Called by the CLI, plans, mask files (JSON specs) and the GUI presets.
// Invariants: every definition below matches docs/masks.md; Generate is deterministic per spec
// (the random blocks use engine/core/split_mix64.h, not std::*_distribution, so the bits are the
// same with every standard library); nothing is allocated before the spec validated, so a bad
// seq_len never asks for more than Mask::kMaxLen^2 bits.
// Measured at L = 1024 with the defaults (tests/engine/mask_generators_test.cpp): sliding
// window 93.94%, dilated 94.04%, Longformer 87.98%, BigBird 80.95% sparse; the paper's
// Table 2 says 93.8 / 93.8 / 88.8 / 80.8.
#include "engine/mask/mask_spec.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "engine/core/text_format.h"
#include "engine/mask/mask_pattern.h"
#include "engine/mask/random_blocks.h"

namespace stof::engine {

namespace {

// Deepest or/and/not nesting accepted; each level may hold one L x L mask while it builds.
constexpr int kMaxDepth = 16;
// Specs in one tree, the top one and every operand at every level. Each is generated at the
// full L x L: an "or" of 10 bigbirds at L = 32768, a 337-byte file, took 22 s in an ASan
// build, and nothing bounded the operand count.
constexpr int kMaxSpecs = 32;
// BigBird's own block size (Zaheer et al. 2020, and its reference configuration); at L = 1024
// it puts BigBird within 0.2 points of Table 2 (see docs/masks.md).
constexpr int64_t kDefaultRandomBlock = 64;
constexpr double kDefaultFill = 0.1;

// The generator kinds (mask_pattern.h), shared with RowRuns::FromSpec.
using Kind = MaskPattern;

Kind KindFromName(const std::string& name) { return MaskPatternFromName(name); }

bool UsesWidth(Kind k) {
  return k == Kind::kSlidingWindow || k == Kind::kDilated || k == Kind::kLongformer ||
         k == Kind::kBigBird;
}
bool UsesGlobal(Kind k) { return k == Kind::kGlobal || k == Kind::kLongformer || k == Kind::kBigBird; }
bool UsesRandom(Kind k) { return k == Kind::kRandomBlocks || k == Kind::kBigBird; }
bool IsComposition(Kind k) { return IsCompositionPattern(k); }

std::string FormatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status CheckRange(const std::string& field, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return Status::Ok();
  return MakeError(field + ": must be in " + Str(lo) + ".." + Str(hi) + ", got " + Str(v));
}

int64_t DefaultWidth(int64_t seq_len) {
  return std::max<int64_t>(1, std::llround(std::sqrt(static_cast<double>(seq_len))));
}

Status ResolveDocLengths(MaskSpec& s, const std::string& path) {
  const std::string field = path + ".doc_lengths";
  if (s.doc_lengths.empty()) {
    return MakeError(field + ": must list at least one document length (summing to seq_len " +
                     Str(s.seq_len) + ")");
  }
  int64_t sum = 0;
  for (size_t i = 0; i < s.doc_lengths.size(); ++i) {
    // Each length is at most seq_len, so the running sum cannot overflow.
    STOF_RETURN_IF_ERROR(
        CheckRange(field + "[" + std::to_string(i) + "]", s.doc_lengths[i], 1, s.seq_len));
    sum += s.doc_lengths[i];
  }
  if (sum != s.seq_len) {
    return MakeError(field + ": sum " + Str(sum) + " != seq_len " + Str(s.seq_len));
  }
  return Status::Ok();
}

Status ResolveParams(MaskSpec& s, Kind kind, const std::string& path) {
  const int64_t L = s.seq_len;
  if (UsesWidth(kind)) {
    if (s.width < 0) s.width = DefaultWidth(L);
    STOF_RETURN_IF_ERROR(CheckRange(path + ".width", s.width, 1, L));
  }
  if (UsesGlobal(kind)) {
    if (s.global < 0) s.global = DefaultWidth(L);
    STOF_RETURN_IF_ERROR(CheckRange(path + ".global", s.global, 0, L));
  }
  if (kind == Kind::kDilated) {
    if (s.dilation < 0) s.dilation = 1;
    STOF_RETURN_IF_ERROR(CheckRange(path + ".dilation", s.dilation, 0, L));
  }
  if (UsesRandom(kind)) {
    if (s.fill < 0) s.fill = kDefaultFill;
    if (!(s.fill >= 0.0 && s.fill <= 1.0)) {  // also catches NaN
      return MakeError(path + ".fill: must be in [0, 1], got " + FormatDouble(s.fill));
    }
    if (s.block < 0) s.block = std::min(kDefaultRandomBlock, L);
    STOF_RETURN_IF_ERROR(CheckRange(path + ".block", s.block, 1, L));
  }
  if (kind == Kind::kDocument) {
    STOF_RETURN_IF_ERROR(ResolveDocLengths(s, path));
  } else if (!s.doc_lengths.empty()) {
    return MakeError(path + ".doc_lengths: only 'document' takes document lengths, '" +
                     s.pattern + "' got " + std::to_string(s.doc_lengths.size()));
  }
  return Status::Ok();
}

// `specs`: the specs of the tree seen so far (kMaxSpecs); `max_len`: the largest seq_len.
Expected<MaskSpec> ResolveAt(const MaskSpec& spec, const std::string& path, int depth,
                             int& specs, int64_t max_len);

Status ResolveOperands(MaskSpec& s, Kind kind, const std::string& path, int depth, int& specs,
                       int64_t max_len) {
  const size_t n = s.operands.size();
  if (!IsComposition(kind)) {
    if (n == 0) return Status::Ok();
    return MakeError(path + ".operands: only or/and/not take operands, '" + s.pattern + "' got " +
                     std::to_string(n));
  }
  if (kind == Kind::kNot && n != 1) {
    return MakeError(path + ".operands: 'not' needs exactly 1 operand, got " + std::to_string(n));
  }
  if (kind != Kind::kNot && n < 2) {
    return MakeError(path + ".operands: '" + s.pattern + "' needs at least 2 operands, got " +
                     std::to_string(n));
  }
  if (depth >= kMaxDepth) {
    return MakeError(path + ".operands: nested deeper than " + std::to_string(kMaxDepth) +
                     " levels");
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string op_path = path + ".operands[" + std::to_string(i) + "]";
    MaskSpec op = s.operands[i];
    if (op.seq_len <= 0) op.seq_len = s.seq_len;
    if (op.seq_len != s.seq_len) {
      return MakeError(op_path + ".seq_len: " + Str(op.seq_len) + " != the " + s.pattern +
                       "'s seq_len " + Str(s.seq_len));
    }
    STOF_ASSIGN_OR_RETURN(auto resolved, ResolveAt(op, op_path, depth + 1, specs, max_len));
    s.operands[i] = std::move(resolved);
  }
  return Status::Ok();
}

Expected<MaskSpec> ResolveAt(const MaskSpec& spec, const std::string& path, int depth,
                             int& specs, int64_t max_len) {
  if (++specs > kMaxSpecs) {
    return MakeError(path + ": more than " + std::to_string(kMaxSpecs) +
                     " mask specs in all (the top one and every operand, at every level; each "
                     "is generated at the full seq_len)");
  }
  const Kind kind = KindFromName(spec.pattern);
  if (kind == Kind::kUnknown) {
    std::string names;
    for (const std::string& n : MaskPatternNames()) names += (names.empty() ? "" : ", ") + n;
    return MakeError(path + ".pattern: unknown '" + spec.pattern + "'; expected one of " + names);
  }
  STOF_RETURN_IF_ERROR(CheckRange(path + ".seq_len", spec.seq_len, 1, max_len));
  MaskSpec s = spec;
  STOF_RETURN_IF_ERROR(ResolveParams(s, kind, path));
  STOF_RETURN_IF_ERROR(ResolveOperands(s, kind, path, depth, specs, max_len));
  return s;
}

// ---- Builders. Each ORs its pattern into `m` (L x L); specs are already resolved. ----------

void AddFull(Mask& m) { m.SetRect(0, m.Rows(), 0, m.Cols()); }

void AddLowerTriangle(Mask& m) {
  for (int64_t i = 0; i < m.Rows(); ++i) m.SetRange(i, 0, i + 1);
}

// |i - j| < w.
void AddBand(Mask& m, int64_t w) {
  for (int64_t i = 0; i < m.Rows(); ++i) m.SetRange(i, i - w + 1, i + w);
}

// j = i + k (r + 1) for |k| < w.
void AddDilated(Mask& m, int64_t w, int64_t r) {
  const int64_t step = r + 1;
  const int64_t L = m.Cols();
  for (int64_t i = 0; i < m.Rows(); ++i) {
    for (int64_t k = -(w - 1); k <= w - 1; ++k) {
      const int64_t j = i + k * step;
      if (j >= 0 && j < L) m.Set(i, j);
    }
  }
}

// i < g or j < g.
void AddGlobal(Mask& m, int64_t g) {
  m.SetRect(0, g, 0, m.Cols());
  for (int64_t i = g; i < m.Rows(); ++i) m.SetRange(i, 0, g);
}

void AddDocuments(Mask& m, const std::vector<int64_t>& lengths) {
  int64_t start = 0;
  for (int64_t n : lengths) {
    m.SetRect(start, start + n, start, start + n);
    start += n;
  }
}

bool BlockIsEmpty(const Mask& m, int64_t bi, int64_t bj, int64_t b) {
  return m.CountRect(bi * b, (bi + 1) * b, bj * b, (bj + 1) * b) == 0;
}

// Random blocks on a b x b grid (the last row/column of blocks is clipped at L). With
// only_empty, the candidates are the blocks that `m` leaves empty (BigBird draws its random
// keys outside the window and the global tokens); otherwise every block. Exactly
// round(fill * candidates) blocks are chosen, by selection sampling (random_blocks.h) so the
// memory stays O(1) even for b = 1 at L = 32768.
void AddRandomBlocks(Mask& m, double fill, int64_t b, uint64_t seed, bool only_empty) {
  const int64_t nb = (m.Rows() + b - 1) / b;
  int64_t candidates = nb * nb;
  if (only_empty) {
    candidates = 0;
    for (int64_t bi = 0; bi < nb; ++bi) {
      for (int64_t bj = 0; bj < nb; ++bj) candidates += BlockIsEmpty(m, bi, bj, b) ? 1 : 0;
    }
  }
  // Blocks do not overlap, so setting a chosen block never changes a later block's emptiness.
  SelectRandomBlocks(
      nb, candidates, fill, seed,
      [&](int64_t bi, int64_t bj) { return !only_empty || BlockIsEmpty(m, bi, bj, b); },
      [&](int64_t bi, int64_t bj) { m.SetRect(bi * b, (bi + 1) * b, bj * b, (bj + 1) * b); });
}

void ApplyCausal(Mask& m) {
  for (int64_t i = 0; i < m.Rows(); ++i) m.SetRange(i, i + 1, m.Cols(), false);
}

Expected<Mask> Build(const MaskSpec& s);

Expected<Mask> BuildComposition(const MaskSpec& s, Kind kind) {
  auto acc = Build(s.operands[0]);
  if (!acc.IsOk()) return acc;
  if (kind == Kind::kNot) return Mask::Not(*acc);
  for (size_t i = 1; i < s.operands.size(); ++i) {
    auto next = Build(s.operands[i]);
    if (!next.IsOk()) return next;
    acc = (kind == Kind::kOr) ? Mask::Or(*acc, *next) : Mask::And(*acc, *next);
    if (!acc.IsOk()) return acc;
  }
  return acc;
}

void BuildAtomic(Mask& m, const MaskSpec& s, Kind kind) {
  switch (kind) {
    case Kind::kFull: AddFull(m); break;
    case Kind::kCausal: AddLowerTriangle(m); break;
    case Kind::kSlidingWindow: AddBand(m, s.width); break;
    case Kind::kDilated: AddDilated(m, s.width, s.dilation); break;
    case Kind::kGlobal: AddGlobal(m, s.global); break;
    case Kind::kRandomBlocks: AddRandomBlocks(m, s.fill, s.block, s.seed, false); break;
    case Kind::kLongformer:
      AddGlobal(m, s.global);
      AddBand(m, s.width);
      break;
    case Kind::kBigBird:
      AddGlobal(m, s.global);
      AddBand(m, s.width);
      AddRandomBlocks(m, s.fill, s.block, s.seed, true);
      break;
    case Kind::kDocument: AddDocuments(m, s.doc_lengths); break;
    default: break;  // compositions are built by BuildComposition
  }
}

Expected<Mask> Build(const MaskSpec& s) {
  const Kind kind = KindFromName(s.pattern);
  Expected<Mask> m = Mask();
  if (IsComposition(kind)) {
    m = BuildComposition(s, kind);
  } else {
    m = Mask::Create(s.seq_len, s.seq_len, "mask");
    if (m.IsOk()) BuildAtomic(*m, s, kind);
  }
  if (m.IsOk() && s.causal) ApplyCausal(*m);
  return m;
}

std::string DescribeResolved(const MaskSpec& s) {
  const Kind kind = KindFromName(s.pattern);
  std::string out = s.pattern;
  if (IsComposition(kind)) {
    out += "(";
    for (size_t i = 0; i < s.operands.size(); ++i) {
      if (i) out += ", ";
      out += DescribeResolved(s.operands[i]);
    }
    out += ")";
  } else {
    out += " L=" + Str(s.seq_len);
    if (UsesWidth(kind)) out += " w=" + Str(s.width);
    if (kind == Kind::kDilated) out += " r=" + Str(s.dilation);
    if (UsesGlobal(kind)) out += " g=" + Str(s.global);
    if (UsesRandom(kind)) {
      out += " fill=" + FormatDouble(s.fill) + " block=" + Str(s.block) +
             " seed=" + std::to_string(s.seed);
    }
    if (kind == Kind::kDocument) {
      out += " docs=[";
      for (size_t i = 0; i < s.doc_lengths.size() && i < 8; ++i) {
        if (i) out += ",";
        out += Str(s.doc_lengths[i]);
      }
      out += s.doc_lengths.size() > 8 ? ",...]" : "]";
    }
  }
  if (s.causal) out += " causal";
  return out;
}

}  // namespace

std::vector<std::string> MaskPatternParams(const std::string& pattern) {
  const Kind kind = KindFromName(pattern);
  std::vector<std::string> out;
  if (UsesWidth(kind)) out.push_back("width");
  if (UsesGlobal(kind)) out.push_back("global");
  if (kind == Kind::kDilated) out.push_back("dilation");
  if (UsesRandom(kind)) out.insert(out.end(), {"fill", "block", "seed"});
  if (kind == Kind::kDocument) out.push_back("doc_lengths");
  return out;
}

const std::vector<std::string>& MaskPatternNames() {
  static const std::vector<std::string> kNames = {
      "full",   "causal",   "sliding_window", "dilated", "global", "random_blocks",
      "longformer", "bigbird", "document",     "or",      "and",    "not"};
  return kNames;
}

Expected<MaskSpec> Resolve(const MaskSpec& spec) { return Resolve(spec, Mask::kMaxLen); }

Expected<MaskSpec> Resolve(const MaskSpec& spec, int64_t max_seq_len) {
  int specs = 0;
  return ResolveAt(spec, "mask", 0, specs, max_seq_len);
}

Expected<Mask> Generate(const MaskSpec& spec) {
  STOF_ASSIGN_OR_RETURN(auto resolved, Resolve(spec));
  return Build(resolved);
}

std::string Describe(const MaskSpec& spec) {
  auto resolved = Resolve(spec);
  return DescribeResolved(resolved.IsOk() ? *resolved : spec);
}

}  // namespace stof::engine
