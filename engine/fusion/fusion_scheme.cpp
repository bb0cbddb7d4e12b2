// Fusion codes and segments (see fusion_scheme.h).
#include "engine/fusion/fusion_scheme.h"

#include <utility>

namespace stof::engine {

std::string SegmentLabel(const Segment& s) {
  if (s.first == s.last) return "[#" + std::to_string(s.first) + "]";
  if (s.last == s.first + 1) {
    return "[#" + std::to_string(s.first) + ",#" + std::to_string(s.last) + "]";
  }
  return "[#" + std::to_string(s.first) + "-#" + std::to_string(s.last) + "]";
}

int CiCount(const OpGraph& g, const Segment& s) {
  int n = 0;
  for (int op = s.first; op <= s.last; ++op) n += g.At(op).Class() == OpClass::kCI ? 1 : 0;
  return n;
}

Expected<std::vector<Segment>> CodeToSegments(const std::string& code, const std::string& field) {
  if (code.empty()) return MakeError(field + ": expected at least one 0/1 digit, got ''");
  if (code.find_first_not_of("01") != std::string::npos) {
    std::string shown = code.size() > 64 ? code.substr(0, 61) + "..." : code;
    return MakeError(field + ": expected only 0/1 digits, got '" + shown + "'");
  }
  std::vector<Segment> segs;
  for (size_t i = 0; i < code.size(); ++i) {
    const int op = static_cast<int>(i) + 1;
    if (i == 0 || code[i] != code[i - 1]) segs.push_back(Segment{op, op});
    segs.back().last = op;
  }
  return segs;
}

Expected<std::string> SegmentsToCode(const std::vector<Segment>& segments, char first_digit,
                                     const std::string& field) {
  if (first_digit != '0' && first_digit != '1') {
    return MakeError(field + ": first digit must be '0' or '1', got '" +
                     std::string(1, first_digit) + "'");
  }
  if (segments.empty()) return MakeError(field + ": expected at least one segment, got none");
  std::string code;
  char digit = first_digit;
  int next = 1;
  for (size_t i = 0; i < segments.size(); ++i) {
    const Segment& s = segments[i];
    const std::string at = field + "[" + std::to_string(i) + "]";
    if (s.first != next) {
      return MakeError(at + ": expected the segment to start at op " + std::to_string(next) +
                       " (contiguous ops only), got " + SegmentLabel(s));
    }
    if (s.last < s.first) {
      return MakeError(at + ": expected last >= first, got first " + std::to_string(s.first) +
                       ", last " + std::to_string(s.last));
    }
    code.append(static_cast<size_t>(s.Size()), digit);
    digit = digit == '0' ? '1' : '0';
    next = s.last + 1;
  }
  return code;
}

namespace {
// Length and CI limit of a well-formed code's segments against `g`.
Status CheckAgainstGraph(const std::string& code, const std::vector<Segment>& segs,
                         const OpGraph& g, const std::string& field) {
  if (static_cast<int>(code.size()) != g.Size()) {
    return MakeError(field + ": expected " + std::to_string(g.Size()) + " digits (one per op of the " +
                     (g.model.empty() ? std::string("layer") : g.model + " layer") + "), got " +
                     std::to_string(code.size()));
  }
  for (const Segment& s : segs) {
    const int ci = CiCount(g, s);
    if (ci > kMaxCiPerSegment) {
      std::string list;
      for (int op = s.first; op <= s.last; ++op) {
        if (g.At(op).Class() != OpClass::kCI) continue;
        list += (list.empty() ? "" : ", ") + std::string(OpKindName(g.At(op).kind)) + " #" +
                std::to_string(op);
      }
      return MakeError(field + ": segment " + SegmentLabel(s) + " has " + std::to_string(ci) +
                       " CI ops (" + list + "), at most " + std::to_string(kMaxCiPerSegment) +
                       " allowed");
    }
  }
  return Status::Ok();
}
}  // namespace

Expected<FusionScheme> FusionScheme::FromCode(const std::string& code, const OpGraph& g,
                                              const std::string& field) {
  STOF_ASSIGN_OR_RETURN(auto segs, CodeToSegments(code, field));
  STOF_RETURN_IF_ERROR(CheckAgainstGraph(code, segs, g, field));
  FusionScheme s;
  s.m_code = code;
  s.m_segments = std::move(segs);
  return s;
}

Expected<FusionScheme> FusionScheme::FromSegments(const std::vector<Segment>& segments,
                                                  const OpGraph& g, char first_digit,
                                                  const std::string& field) {
  STOF_ASSIGN_OR_RETURN(auto code, SegmentsToCode(segments, first_digit, field));
  if (segments.back().last != g.Size()) {
    return MakeError(field + ": expected the segments to cover ops 1.." + std::to_string(g.Size()) +
                     ", they end at op " + std::to_string(segments.back().last));
  }
  STOF_RETURN_IF_ERROR(CheckAgainstGraph(code, segments, g, field));
  FusionScheme s;
  s.m_code = std::move(code);
  s.m_segments = segments;
  return s;
}

FusionScheme FusionScheme::OpByOp(const OpGraph& g) {
  FusionScheme s;
  for (int op = 1; op <= g.Size(); ++op) {
    s.m_code.push_back(op % 2 == 1 ? '0' : '1');
    s.m_segments.push_back(Segment{op, op});
  }
  return s;
}

int FusionScheme::SegmentOf(int op) const {
  for (size_t i = 0; i < m_segments.size(); ++i) {
    if (m_segments[i].Contains(op)) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace stof::engine
