// Candidate printing and validation (candidate.h).
#include "engine/mcfuser/candidate.h"

namespace stof::engine {

std::string ToString(const Candidate& c) {
  return ToString(c.expr) + " bm=" + std::to_string(c.tiles.bm) +
         " bn=" + std::to_string(c.tiles.bn) + " bk=" + std::to_string(c.tiles.bk) +
         " bh=" + std::to_string(c.tiles.bh);
}

uint64_t CandidateKey(const Candidate& c) {
  auto field = [](int64_t tile) { return static_cast<uint64_t>(tile / 16 - 1) & 0xfffu; };
  return static_cast<uint64_t>(TilingExprIndex(c.expr) + 1) << 48 | field(c.tiles.bm) << 36 |
         field(c.tiles.bn) << 24 | field(c.tiles.bk) << 12 | field(c.tiles.bh);
}

Status ValidateCandidate(const Candidate& c, const std::string& what) {
  STOF_RETURN_IF_ERROR(c.shape.Validate(what + ": shape"));
  STOF_RETURN_IF_ERROR(ValidateTilingExpr(c.expr).WithContext(what + ": "));
  STOF_RETURN_IF_ERROR(ValidateTiles(c.shape, c.tiles, what + ": tiles"));
  return Status::Ok();
}

}  // namespace stof::engine
