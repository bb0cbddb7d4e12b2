// MCFuser's heuristic search (paper, section IV-B, Algorithm 1) over a pruned CandidateSpace,
// and an exhaustive ranking by the model for small spaces. Measuring is injected (the tuner
// passes a function that runs the GEMM-chain kernel; tests pass the model or a fake), so this
// file has no GPU dependency. Used by the tuner, the CLI and the studio.
//
// Algorithm 1 as implemented (choices where the paper is silent are marked *):
//   population = N candidates drawn without replacement from the space (all of it when it
//     holds <= N), with SplitMix64(seed): the same seed gives the same search everywhere.
//   loop:
//     estimate every member (chain_model.h); order the distinct members by estimate (ties:
//       position in the space);
//     measure the top n (n = 8) of them *that have not failed before; a candidate measured
//       once is never measured again (its time is reused);
//     round best = the fastest of those n; *stop when it improves on the best so far by less
//       than epsilon (relative: (best - round) / best < epsilon; a worse round stops too);
//       the first round cannot stop; *a round where every measurement failed does not count;
//     mutate: draw N parents with replacement, weight 1 / estimate; in each, one loop
//       (uniform among m, n, k, h) gets *another tile size from the space's options for that
//       loop (uniform); *a child outside the space (rule 4, or merged as equivalent) is
//       redrawn, up to 8 times, then the parent is kept unchanged. The expression is never
//       mutated (the paper mutates tile sizes only); the initial population mixes them.
//   *also stops after max_iterations rounds or when the progress callback returns false
//   (converged = false then).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"
#include "engine/mcfuser/candidate.h"
#include "engine/mcfuser/candidate_space.h"
#include "engine/mcfuser/chain_model.h"

namespace stof::engine {

// Seconds for one run of the candidate's kernel, or an error (unsupported, failed check...).
using ChainMeasureFn = std::function<Expected<double>(const Candidate&)>;

struct ChainSearchOptions {
  int64_t population = 128;  // N (the paper gives no value)
  int64_t top_n = 8;         // n, as in the paper
  double epsilon = 0.01;     // relative improvement below which the search stops
  uint64_t seed = 1;
  int64_t max_iterations = 100;

  Status Validate(const std::string& what = "search_options") const;
};

struct MeasuredCandidate {
  Candidate candidate;
  double estimate_seconds = 0;
  double measured_seconds = 0;  // 0 when the measurement failed
  std::string error;            // empty when it succeeded
  int64_t iteration = 0;        // 1-based round that measured it
};

struct ChainSearchProgress {
  int64_t iteration = 0;          // rounds done
  int64_t measured = 0;           // distinct candidates measured so far (failures included)
  double round_best_seconds = 0;  // 0 when nothing in the round succeeded
  double best_seconds = 0;        // 0 while nothing succeeded
  Candidate best;
};
// Called after each round; return false to stop the search (cancel).
using ChainProgressFn = std::function<bool(const ChainSearchProgress&)>;

struct ChainSearchResult {
  Candidate best;
  double best_seconds = 0;           // measured
  double best_estimate_seconds = 0;  // the model's
  int64_t measured = 0;              // distinct candidates measured, failures included
  int64_t failed = 0;
  int64_t iterations = 0;
  bool converged = false;            // stopped by epsilon
  std::vector<MeasuredCandidate> history;  // in measurement order
};

// `space` must come from BuildCandidateSpace (its candidates are valid, its index matches).
// Errors: bad options or device, an empty space, a measure function that is empty, or no
// candidate measured successfully (the message quotes the first measurement error).
Expected<ChainSearchResult> SearchChain(const CandidateSpace& space, const DeviceSpec& device,
                                        const ChainMeasureFn& measure,
                                        const ChainSearchOptions& options = {},
                                        const ChainProgressFn& progress = {});

struct RankedCandidate {
  Candidate candidate;
  ChainEstimate estimate;
};
// Every candidate of the space by estimate, fastest first (ties keep space order); at most
// `limit` of them (all when limit < 0).
Expected<std::vector<RankedCandidate>> RankCandidates(const CandidateSpace& space,
                                                      const DeviceSpec& device,
                                                      int64_t limit = -1);

}  // namespace stof::engine
