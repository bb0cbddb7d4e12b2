// Algorithm 1 of MCFuser and the exhaustive model ranking (chain_search.h). Determinism: all
// randomness comes from one SplitMix64; orders come from sorts with total tie-breaks, never
// from hash-map iteration.
#include "engine/mcfuser/chain_search.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "engine/core/split_mix64.h"

namespace stof::engine {

namespace {

constexpr int kMutationTries = 8;

// N distinct positions of [0, size) (Floyd's algorithm), in the order drawn.
std::vector<int64_t> SampleDistinct(int64_t size, int64_t count, SplitMix64& rng) {
  std::vector<int64_t> out;
  if (size <= count) {
    out.resize(static_cast<size_t>(size));
    std::iota(out.begin(), out.end(), int64_t{0});
    return out;
  }
  std::unordered_set<int64_t> taken;
  for (int64_t j = size - count; j < size; ++j) {
    const int64_t t = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(j + 1)));
    const int64_t pick = taken.count(t) ? j : t;
    taken.insert(pick);
    out.push_back(pick);
  }
  return out;
}

// One loop of the parent gets another tile size; -1 when the child is not in the space.
int64_t Mutate(const CandidateSpace& space, int64_t parent, SplitMix64& rng) {
  Candidate child = space.candidates[static_cast<size_t>(parent)];
  const int loop = static_cast<int>(rng.Below(4));
  const std::vector<int64_t>& options = space.tile_options[static_cast<size_t>(loop)];
  int64_t* tile = loop == 0 ? &child.tiles.bm
                : loop == 1 ? &child.tiles.bn
                : loop == 2 ? &child.tiles.bk
                            : &child.tiles.bh;
  if (options.size() < 2) return -1;
  const auto current = std::find(options.begin(), options.end(), *tile) - options.begin();
  int64_t pick = static_cast<int64_t>(rng.Below(options.size() - 1));
  if (pick >= current) ++pick;  // uniform among the other options
  *tile = options[static_cast<size_t>(pick)];
  return space.Find(child);
}

}  // namespace

Status ChainSearchOptions::Validate(const std::string& what) const {
  if (population < 1)
    return MakeError(what + ": population: must be positive, got " + std::to_string(population));
  if (top_n < 1)
    return MakeError(what + ": top_n: must be positive, got " + std::to_string(top_n));
  if (!(epsilon >= 0))
    return MakeError(what + ": epsilon: must be >= 0, got " + std::to_string(epsilon));
  if (max_iterations < 1)
    return MakeError(what + ": max_iterations: must be positive, got " +
                     std::to_string(max_iterations));
  return Status::Ok();
}

Expected<ChainSearchResult> SearchChain(const CandidateSpace& space, const DeviceSpec& device,
                                        const ChainMeasureFn& measure,
                                        const ChainSearchOptions& options,
                                        const ChainProgressFn& progress) {
  STOF_RETURN_IF_ERROR(options.Validate());
  STOF_RETURN_IF_ERROR(device.Validate());
  if (!measure) return MakeError("search: measure: no function given");
  if (space.candidates.empty())
    return MakeError("search: gemm_chain " + ToString(space.shape) +
                     ": the candidate space is empty (every candidate was pruned)");
  const int64_t space_size = static_cast<int64_t>(space.candidates.size());
  auto at = [&](int64_t pos) -> const Candidate& {
    return space.candidates[static_cast<size_t>(pos)];
  };

  SplitMix64 rng(options.seed);
  std::vector<int64_t> population = SampleDistinct(space_size, options.population, rng);
  std::unordered_map<int64_t, double> estimates;
  std::unordered_map<int64_t, std::optional<double>> measured;  // nullopt: failed
  ChainSearchResult result;
  std::string first_error;
  int64_t best_pos = -1;
  double best_t = std::numeric_limits<double>::infinity();

  for (int64_t iter = 1; iter <= options.max_iterations; ++iter) {
    result.iterations = iter;
    for (int64_t pos : population)
      if (!estimates.count(pos)) estimates[pos] = EstimateChainUnchecked(at(pos), device).seconds;
    std::vector<int64_t> order = population;
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      const double ea = estimates[a], eb = estimates[b];
      return ea != eb ? ea < eb : a < b;
    });
    order.erase(std::unique(order.begin(), order.end()), order.end());

    double round_t = std::numeric_limits<double>::infinity();
    int64_t round_pos = -1;
    int64_t taken = 0;
    for (int64_t pos : order) {
      if (taken == options.top_n) break;
      auto it = measured.find(pos);
      if (it != measured.end() && !it->second) continue;  // failed before: not again
      ++taken;
      if (it == measured.end()) {
        Expected<double> t = measure(at(pos));
        MeasuredCandidate m{at(pos), estimates[pos], 0, "", iter};
        if (t && std::isfinite(*t) && *t > 0) {
          m.measured_seconds = *t;
          it = measured.emplace(pos, *t).first;
        } else {
          m.error = t ? "measure returned " + std::to_string(*t) + " seconds" : t.Message();
          if (first_error.empty()) first_error = ToString(at(pos)) + ": " + m.error;
          ++result.failed;
          it = measured.emplace(pos, std::nullopt).first;
        }
        result.history.push_back(std::move(m));
      }
      if (it->second && *it->second < round_t) {
        round_t = *it->second;
        round_pos = pos;
      }
    }
    result.measured = static_cast<int64_t>(measured.size());

    bool stop = false;
    if (round_pos >= 0) {
      if (best_pos >= 0 && (best_t - round_t) / best_t < options.epsilon) {
        result.converged = stop = true;
      }
      if (round_t < best_t) {
        best_t = round_t;
        best_pos = round_pos;
      }
    }
    if (progress) {
      ChainSearchProgress p{iter, result.measured, round_pos >= 0 ? round_t : 0,
                            best_pos >= 0 ? best_t : 0, best_pos >= 0 ? at(best_pos) : Candidate{}};
      if (!progress(p)) stop = true;
    }
    if (stop) break;

    // Next population: parents by weight 1 / estimate, one tile size mutated in each.
    std::vector<double> cumulative;
    double total = 0;
    for (int64_t pos : population) cumulative.push_back(total += 1.0 / estimates[pos]);
    std::vector<int64_t> next;
    for (size_t i = 0; i < population.size(); ++i) {
      const double u = rng.Unit() * total;
      size_t j = static_cast<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) -
                                     cumulative.begin());
      const int64_t parent = population[std::min(j, population.size() - 1)];
      int64_t child = -1;
      for (int tries = 0; tries < kMutationTries && child < 0; ++tries)
        child = Mutate(space, parent, rng);
      next.push_back(child >= 0 ? child : parent);
    }
    population = std::move(next);
  }

  if (best_pos < 0)
    return MakeError("search: gemm_chain " + ToString(space.shape) + ": no candidate could be "
                     "measured (" + std::to_string(result.failed) + " failed; first: " +
                     first_error + ")");
  result.best = at(best_pos);
  result.best_seconds = best_t;
  result.best_estimate_seconds = estimates[best_pos];
  return result;
}

Expected<std::vector<RankedCandidate>> RankCandidates(const CandidateSpace& space,
                                                      const DeviceSpec& device, int64_t limit) {
  STOF_RETURN_IF_ERROR(device.Validate());
  std::vector<RankedCandidate> out;
  out.reserve(space.candidates.size());
  for (const Candidate& c : space.candidates)
    out.push_back({c, EstimateChainUnchecked(c, device)});
  std::stable_sort(out.begin(), out.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
    return a.estimate.seconds < b.estimate.seconds;
  });
  if (limit >= 0 && static_cast<size_t>(limit) < out.size()) out.resize(static_cast<size_t>(limit));
  return out;
}

}  // namespace stof::engine
