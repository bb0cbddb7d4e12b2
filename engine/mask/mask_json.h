// JSON form of masks: a MaskSpec as {"pattern": ..., params...} and inline masks as run-length
// rows. Shared by mask files (mask_io) and plans (plan/); text is parsed by json_io.h. Errors
// carry the JSON path ("mask.operands[1].width: expected an integer, got \"x\""). Reading is
// strict: unknown keys, wrong types and out-of-range values are errors; nothing is ignored.
// Exceptions (nlohmann's and our own) stay inside mask_json.cpp / plan_read.cpp.
//
// Spec form (docs/plan-schema.md, "Mask spec"): "pattern" and "seq_len" always (an operand's
// seq_len is omitted when it equals its parent's, and must equal it when given); a parameter
// still at its paper default (width, global, fill, block < 0) is omitted; dilation, seed,
// doc_lengths, causal and operands are written when the pattern uses them or they differ from
// their defaults. A seed is a JSON integer up to 2^53 - 1 and a decimal string above (many JSON
// readers lose precision beyond 2^53); both forms are read. Spec -> JSON -> spec is exact for
// every spec whose sentinel parameters are -1.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine {

// Operands may nest at most this deep (a hostile file must not exhaust the stack).
inline constexpr int kMaxMaskSpecDepth = 16;
// The longest seq_len (and width, global, ... ) a spec may give: as far as row runs build a
// generator (RowRuns::kMaxLen, 2^20, checked in mask_json.cpp). Generate() still stops at
// Mask::kMaxLen; `stof mask` and `stof layout` take longer specs (as row runs or block rules).
inline constexpr int64_t kMaxSpecLen = int64_t{1} << 20;

nlohmann::json MaskSpecToJson(const MaskSpec& spec);
// `path` is the JSON path of `j` used in messages ("plan.json: mask.spec"). Checks types,
// unknown keys, pattern names, operand counts (or/and >= 2, not == 1) and structural ranges
// (lengths up to kMaxSpecLen); parameter semantics (width <= L, doc lengths summing to L, ...)
// are Resolve()'s.
Expected<MaskSpec> MaskSpecFromJson(const nlohmann::json& j, const std::string& path);

// Run-length rows: {"rows": R, "cols": C, "runs": [[start, length, start, length, ...], ...]}
// one array per row, runs of attended columns in increasing order. Written with adjacent runs
// merged; read with full validation: 1 <= R, C <= Mask::kMaxLen (checked before allocating),
// one array per row, pairs, start >= end of the previous run, length >= 1, start + length <= C.
nlohmann::json MaskToRunLengthJson(const Mask& mask);
Expected<Mask> MaskFromRunLengthJson(const nlohmann::json& j, const std::string& path);

}  // namespace stof::engine
