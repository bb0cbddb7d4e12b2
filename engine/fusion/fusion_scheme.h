// FusionScheme: STOF's binary code of a layer's fusion (docs/references.md, STOF 4.3): one digit per
// op, adjacent ops with equal digits form one segment, so digits alternate 0/1 between
// segments ("10000011100011" = BERT's [#1] [#2-#6] [#7-#9] [#10-#12] [#13,#14]). Also written in
// hex (scheme_hex.h). Used by template matching, the expand/seize/compete rules, `stof graph
// --scheme`, and (later) the tuner and plans.
// Invariants of a FusionScheme: the code has only 0/1 digits, one per op of its graph; the
// segments are the code's maximal runs, contiguous, covering ops 1..N in order; no segment has
// more than two CI ops. A code and its complement ("1100", "0011") give the same segments; a
// scheme built from segments starts with the digit it is given ('0' by default).
#pragma once

#include <string>
#include <vector>

#include "engine/core/status.h"
#include "engine/graph/op.h"

namespace stof::engine {

// Ops first..last (1-based, inclusive) of a layer.
struct Segment {
  int first = 0;
  int last = 0;
  int Size() const { return last - first + 1; }
  bool Contains(int op) const { return first <= op && op <= last; }
  bool operator==(const Segment&) const = default;
};
// "[#7-#9]", "[#1]".
std::string SegmentLabel(const Segment& s);

// At most two CI ops (GEMM, BatchGEMM) in one segment (STOF 4.4).
inline constexpr int kMaxCiPerSegment = 2;
int CiCount(const OpGraph& g, const Segment& s);

// The code's maximal runs of equal digits. `field` names the code in messages
// ("fusion.code: expected only 0/1 digits, got '012'").
Expected<std::vector<Segment>> CodeToSegments(const std::string& code,
                                              const std::string& field = "fusion.code");
// The code of contiguous segments covering 1..N; the first segment gets `first_digit`.
// Segments must be contiguous from op 1 (the message names `field` and the segment index).
Expected<std::string> SegmentsToCode(const std::vector<Segment>& segments, char first_digit = '0',
                                     const std::string& field = "fusion.segments");

class FusionScheme {
 public:
  // Checks digits, length == op count and the CI limit; messages start with `field`.
  static Expected<FusionScheme> FromCode(const std::string& code, const OpGraph& g,
                                         const std::string& field = "fusion.code");
  static Expected<FusionScheme> FromSegments(const std::vector<Segment>& segments,
                                             const OpGraph& g, char first_digit = '0',
                                             const std::string& field = "fusion.segments");
  // Every op its own segment ("0101..."): the unfused layer.
  static FusionScheme OpByOp(const OpGraph& g);

  const std::string& Code() const { return m_code; }
  const std::vector<Segment>& Segments() const { return m_segments; }
  // Index of the segment holding op `op` (1-based op number).
  int SegmentOf(int op) const;
  bool operator==(const FusionScheme& o) const { return m_code == o.m_code; }

 private:
  std::string m_code;
  std::vector<Segment> m_segments;
};

}  // namespace stof::engine
