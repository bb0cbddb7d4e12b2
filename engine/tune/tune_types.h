// The tuner's shared vocabulary (engine/tune/): what it is asked (TuneOptions), what a
// candidate costs (SegmentCost), what it reports while it runs (TuneProgress and the events a
// TuneObserver receives: the studio subscribes, the CLI draws a progress bar) and what it
// returns (TuneResult, with the time split TuneStats uses to show the tuner's own overhead).
// Used by every search method (tune_*.cpp), the cost sources, `stof tune` and the studio.
// Invariants: times are in microseconds (us) for kernels and seconds (s) for the tuner;
// a cost with `measured` false is a prediction of the analytical model (never shown as a
// measurement); events are delivered on the tuner's thread, in order.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/fusion/fusion_scheme.h"
#include "engine/run/segment_choice.h"

namespace stof::engine {

enum class TuneMethod { kStof, kGtco, kMcfuser, kExhaustive };
const char* TuneMethodName(TuneMethod m);  // "stof", "gtco", "mcfuser", "exhaustive"
Expected<TuneMethod> ParseTuneMethod(const std::string& s);
const std::vector<TuneMethod>& AllTuneMethods();

struct TuneOptions {
  TuneMethod method = TuneMethod::kStof;
  double budget_s = 0;             // wall-clock budget; 0 = none (the method's own end)
  int64_t budget_candidates = 0;   // distinct candidates evaluated; 0 = none
  uint64_t seed = 1;               // every random draw of the search
  static constexpr int64_t kMaxSamples = 1000000;  // Validate's limit, also `--samples`'s
  int64_t samples = 4;             // STOF / GTCO: parameter settings sampled per segment
  int64_t stage2_per_iteration = 16;  // STOF stage 2: samples per iteration over all segments
  int64_t stage2_iterations = 8;   // STOF stage 2: at most this many iterations
  int64_t max_segment_ops = 6;     // GTCO / exhaustive: longest segment considered
  int64_t exhaustive_max_schemes = int64_t{1} << 16;  // refuse bigger enumerations
  int64_t small_tokens = 1024;     // STOF's initial rule: fuse CI+CI when batch * L <= this
  std::atomic<bool>* cancel = nullptr;  // set to true (any thread) to stop; best so far kept

  Status Validate(const std::string& what = "tune options") const;
};

// The cost of one segment under one choice.
struct SegmentCost {
  double us = 0;             // measured when `measured`, else the prediction
  double predicted_us = 0;   // the analytical model's figure (always filled)
  double bytes = 0;          // predicted DRAM bytes of the segment
  bool measured = false;     // false: a prediction
  bool cached = false;       // taken from the cache file of an earlier run
  std::string error;         // non-empty: this choice does not run (it is never picked)
  bool Ok() const { return error.empty(); }
};

struct TuneProgress {
  std::string method;
  std::string stage;          // "initial", "stage 1: fusion", "stage 2: parameters", ...
  int64_t candidates = 0;     // distinct candidates evaluated (fresh + from the cache file)
  int64_t measured = 0;       // of which measured (or predicted) in this run
  int64_t cache_hits = 0;     // of which taken from the cache file
  double best_us = 0;         // best layer total so far (sum of segments); 0 = none yet
  double elapsed_s = 0;
  double remaining_s = -1;    // estimate; -1 = unknown
  double fraction = -1;       // 0..1 of the planned work; -1 = unknown
};

struct CandidateEvent {
  Segment segment;
  std::string tmpl;           // template name, "" op by op
  std::string choice;         // ChoiceText
  SegmentChoice params;
  SegmentCost cost;
  double elapsed_s = 0;
  int64_t index = 0;          // 1-based candidate number in this run
};

struct BestEvent {
  double total_us = 0;
  std::string code;           // the scheme's binary code
  double elapsed_s = 0;
  int64_t candidates = 0;
};

// STOF stage 2, after each sampling iteration, once per segment of the chosen scheme: how
// many settings the reward allocation gave the segment, what they gained (the reward that
// steers the next allocation) and the segment's best time so far. The studio plots these.
struct RewardEvent {
  int64_t iteration = 0;      // 0-based stage-2 iteration
  size_t segment_index = 0;   // position in the scheme
  Segment segment;
  int64_t samples = 0;        // settings allocated to it in this iteration
  double gain_us = 0;         // time saved by them (the reward), >= 0
  double best_us = 0;         // the segment's best time after the iteration
  double elapsed_s = 0;
};

// The studio and the CLI implement what they need; the defaults ignore the event.
class TuneObserver {
 public:
  virtual ~TuneObserver() = default;
  virtual void OnStage(const TuneProgress&) {}
  virtual void OnCandidate(const CandidateEvent&, const TuneProgress&) {}
  virtual void OnBest(const BestEvent&, const TuneProgress&) {}
  virtual void OnReward(const RewardEvent&, const TuneProgress&) {}
  virtual void OnProgress(const TuneProgress&) {}
};

// Where the tuner's wall time went: evaluating candidates (rebinding calls and timing them on
// the device, or the model's predictions) against its own bookkeeping.
struct TuneStats {
  double total_s = 0;
  double measure_s = 0;      // evaluating candidates: rebinding the layer's calls and timing
                             // them (without a GPU: the model's predictions, which are the
                             // evaluation then)
  double predict_s = 0;      // the analytical model computed beside each measurement
  double cache_s = 0;        // cache file lookups and appends
  double rules_s = 0;        // scheme encoding, expand / seize / compete, template matching
  double reward_s = 0;       // STOF stage 2 bookkeeping
  double search_s = 0;       // everything else of the search (total minus the above)
  int64_t candidates = 0, measured = 0, cache_hits = 0, failed = 0;
  double OverheadShare() const;  // the tuner's own work: (total - measure) / total
};

struct SegmentResult {
  Segment segment;
  std::string tmpl;          // template that runs it ("" op by op)
  SegmentChoice choice;
  std::string choice_text;
  SegmentCost cost;
  SegmentCost default_cost;  // the same segment under its default choice
};

struct TuneResult {
  TuneMethod method = TuneMethod::kStof;
  FusionScheme scheme;
  std::vector<SegmentChoice> choices;     // one per segment of `scheme`
  std::vector<SegmentResult> segments;
  double total_us = 0;                    // sum of the segments' costs
  bool measured = false;                  // false: predictions (no GPU)
  bool cancelled = false;                 // stopped by cancel or budget: best so far
  std::string stopped_by;                 // "converged", "budget (60 s)", "cancelled", ...
  FusionScheme initial_scheme;            // the method's starting point (STOF's rules)
  double initial_us = 0;                  // its cost under default choices
  TuneStats stats;
  std::vector<std::string> notes;         // e.g. "mcfuser: [#10-#12] slower fused, kept apart"
};

}  // namespace stof::engine
