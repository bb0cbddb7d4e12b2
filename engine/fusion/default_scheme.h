// DefaultScheme: the fusion scheme `stof run` uses without a plan, and the tuner's starting
// point for CI+MI and MI+MI fusions: walking the ops left to right, take the longest segment
// that matches a template, except (a) segments whose inner output is read later (it would
// have to reach memory anyway), unless the fused kernel writes it (Add -> Norm), and, unless
// asked for, (b) CI+CI GEMM chains, which only pay at small batch x length (STOF's initial
// rules) and (c) GEMM + LayerNorm row blocks, which on an H100 ran several times slower than
// cuBLASLt + norm on bert-base because each row block reads all of W from L2 (measured:
// docs/benchmarks.md, "Fused segments against their unfused sequences, whole BERT models").
// Both are the tuner's call. Used by app/cli/cmd_run.cpp and tests.
#pragma once

#include "engine/fusion/fusion_scheme.h"
#include "engine/fusion/template_match.h"
#include "engine/graph/op.h"

namespace stof::engine {

struct DefaultSchemeOptions {
  bool gemm_chains = false;  // also take CI+CI GEMM chains
  bool gemm_norm = false;    // also take GEMM + [Add] + norm row blocks
};
FusionScheme DefaultScheme(const OpGraph& g, const DefaultSchemeOptions& options = {});

// True when op `op` of segment `s` (not its last) is read by an op outside `s`.
bool OutputEscapes(const OpGraph& g, const Segment& s, int op);
// The on-chip rule of a fused segment: the first inner op (not the last) whose output is read
// after `s` and that template `kind` does not write anyway (bias_add_norm writes the Add right
// before its norm as sum_out); 0 when every inner output can stay on chip.
int EscapingInnerOutput(const OpGraph& g, const Segment& s, TemplateKind kind);

}  // namespace stof::engine
