// MaskSpec: a mask described by its generator and parameters (recursive for composition).
// Generate() turns it into a Mask; plans and JSON mask files store the spec instead of bits.
// Used by the CLI (`stof mask --pattern`), plans, the GUI's presets. Exact definitions of
// every pattern are in docs/masks.md; defaults follow the STOF paper (w = g = sqrt(L)).
// Invariants: Generate(spec) depends only on the spec (same spec and seed, same bits, on every
// platform: randomness is a self-written splitmix64, never std::*_distribution); a resolved
// spec resolves to itself.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/mask/mask.h"

namespace stof::engine {

struct MaskSpec {
  // One of: "full", "causal", "sliding_window", "dilated", "global", "random_blocks",
  // "longformer", "bigbird", "document", "or", "and", "not".
  std::string pattern = "bigbird";
  int64_t seq_len = 1024;
  // Operands: a seq_len <= 0 inherits the composition's; any other value must equal it.
  // Parameters; -1 / negative means "the paper default" (resolved by Resolve()).
  // Band width w (sliding_window, dilated, longformer, bigbird): w keys on each side counting
  // the diagonal, |i - j| < w, 2w - 1 keys per row; default round(sqrt(L)).
  int64_t width = -1;
  int64_t global = -1;    // global width g (global, longformer, bigbird): i < g or j < g
  // Dilation rate r (dilated): r skipped columns between attended ones; the band keeps its
  // 2w - 1 keys, spread over |i - j| < w (r + 1). r = 0 is the sliding window. Negative -> 1.
  int64_t dilation = 1;
  double fill = -1;       // random-block fill rate in [0, 1] (random_blocks, bigbird); 0.1
  int64_t block = -1;     // random-block size (random_blocks, bigbird); min(64, L)
  uint64_t seed = 0;      // random_blocks, bigbird
  std::vector<int64_t> doc_lengths;  // document: lengths summing to seq_len
  bool causal = false;    // any pattern: also apply j <= i (after everything else)
  std::vector<MaskSpec> operands;    // or / and (two or more), not (exactly one)

  bool operator==(const MaskSpec&) const = default;
};

// Names accepted in MaskSpec::pattern, in display order.
const std::vector<std::string>& MaskPatternNames();

// The MaskSpec parameters `pattern` reads besides seq_len and causal (which every pattern
// takes), in field order: "width", "global", "dilation", "fill", "block", "seed",
// "doc_lengths". Empty for full, causal, the compositions and unknown names. The CLI refuses
// a generator option the pattern would ignore.
std::vector<std::string> MaskPatternParams(const std::string& pattern);

// Replaces defaults (-1) by their values for this seq_len; validates every field (messages
// name the field: "mask.width: must be in 1..L, got 0"). Operands are resolved recursively;
// they nest at most 16 levels and a tree holds at most 32 specs, the top one included.
Expected<MaskSpec> Resolve(const MaskSpec& spec);
// The same with seq_len allowed up to max_seq_len instead of Mask::kMaxLen, for the forms that
// never hold L x L bits (RowRuns::FromSpec).
Expected<MaskSpec> Resolve(const MaskSpec& spec, int64_t max_seq_len);

// Builds the mask. Resolves first; fails on invalid parameters, never allocates beyond
// Mask::kMaxLen^2 bits per operand.
Expected<Mask> Generate(const MaskSpec& spec);

// A short human description ("bigbird L=1024 w=32 g=32 fill=0.1 block=32 seed=0").
std::string Describe(const MaskSpec& spec);

}  // namespace stof::engine
