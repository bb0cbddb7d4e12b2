// GemmChainShape validation, the Table II presets and tile validation (chain_shape.h).
#include "engine/mcfuser/chain_shape.h"

#include <cctype>
#include <set>
#include <utility>

#include "engine/graph/model_config.h"

namespace stof::engine {

namespace {
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
}  // namespace

Status GemmChainShape::Validate(const std::string& what) const {
  auto check = [&](const char* field, int64_t v, int64_t max) -> Status {
    if (v < 1 || v > max)
      return MakeError(what + ": " + field + ": must be in 1.." + std::to_string(max) +
                       ", got " + std::to_string(v));
    return Status::Ok();
  };
  STOF_RETURN_IF_ERROR(check("batch", batch, kMaxBatch));
  STOF_RETURN_IF_ERROR(check("m", m, kMaxDim));
  STOF_RETURN_IF_ERROR(check("n", n, kMaxDim));
  STOF_RETURN_IF_ERROR(check("k", k, kMaxDim));
  STOF_RETURN_IF_ERROR(check("h", h, kMaxDim));
  return Status::Ok();
}

std::string ToString(const GemmChainShape& s) {
  return "(batch " + std::to_string(s.batch) + ", M " + std::to_string(s.m) + ", N " +
         std::to_string(s.n) + ", K " + std::to_string(s.k) + ", H " + std::to_string(s.h) + ")";
}

const std::vector<GemmChainPreset>& GemmChainPresets() {
  static const std::vector<GemmChainPreset> kPresets = {
      {"G1", {1, 512, 256, 64, 64}},      {"G2", {1, 512, 256, 64, 128}},
      {"G3", {1, 512, 256, 64, 256}},     {"G4", {1, 512, 512, 256, 256}},
      {"G5", {1, 512, 512, 512, 256}},    {"G6", {1, 512, 512, 1024, 256}},
      {"G7", {1, 512, 512, 128, 128}},    {"G8", {1, 1024, 512, 128, 128}},
      {"G9", {1, 2048, 512, 128, 128}},   {"G10", {1, 1024, 1024, 128, 128}},
      {"G11", {4, 1024, 1024, 128, 128}}, {"G12", {8, 1024, 1024, 128, 128}},
  };
  return kPresets;
}

Expected<GemmChainShape> FfnChainShape(const std::string& model, int64_t tokens) {
  auto m = FindModelPreset(model);
  if (!m.IsOk()) return MakeError("gemm_chain: ffn: " + m.Message());
  if (tokens < 1 || tokens > GemmChainShape::kMaxDim)
    return MakeError("gemm_chain: ffn: tokens: must be in 1.." +
                     std::to_string(GemmChainShape::kMaxDim) + ", got " + std::to_string(tokens));
  GemmChainShape s{1, tokens, m->ffn, m->hidden, m->hidden};
  STOF_RETURN_IF_ERROR(s.Validate("gemm_chain: ffn:" + model));
  return s;
}

Expected<GemmChainShape> FindGemmChainPreset(const std::string& name) {
  const std::string lower = Lower(name);
  if (lower.rfind("ffn:", 0) == 0) {
    const size_t colon = lower.find(':', 4);
    const std::string tokens = colon == std::string::npos ? "" : lower.substr(colon + 1);
    if (colon == std::string::npos || tokens.empty() ||
        tokens.find_first_not_of("0123456789") != std::string::npos || tokens.size() > 9)
      return MakeError("gemm_chain: '" + name + "': expected ffn:<model preset>:<tokens>, e.g. "
                       "ffn:bert-base:128");
    return FfnChainShape(lower.substr(4, colon - 4), std::stoll(tokens));
  }
  std::string known;
  for (const GemmChainPreset& p : GemmChainPresets()) {
    if (Lower(p.name) == lower) return p.shape;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  return MakeError("gemm_chain: unknown preset '" + name + "'; known: " + known +
                   ", or ffn:<model preset>:<tokens>");
}

std::vector<GemmChainPreset> FfnChainPresets() {
  std::vector<GemmChainPreset> out;
  std::set<std::pair<int64_t, int64_t>> seen;
  for (const ModelConfig& m : ModelPresets()) {
    if (!seen.insert({m.hidden, m.ffn}).second) continue;
    for (int64_t tokens : {1, 16, 128, 4096, 32768})
      out.push_back({"ffn:" + m.name + ":" + std::to_string(tokens),
                     GemmChainShape{1, tokens, m.ffn, m.hidden, m.hidden}});
  }
  return out;
}

Status ValidateTiles(const GemmChainShape& shape, const ChainTiles& tiles,
                     const std::string& what) {
  auto check = [&](const char* field, int64_t tile, const char* dim_name,
                   int64_t dim) -> Status {
    const int64_t max = RoundUp16(dim);
    if (tile < 16 || tile > max || tile % 16 != 0)
      return MakeError(what + ": " + field + ": must be a multiple of 16 in 16.." +
                       std::to_string(max) + " (" + dim_name + " = " + std::to_string(dim) +
                       "), got " + std::to_string(tile));
    return Status::Ok();
  };
  STOF_RETURN_IF_ERROR(check("bm", tiles.bm, "m", shape.m));
  STOF_RETURN_IF_ERROR(check("bn", tiles.bn, "n", shape.n));
  STOF_RETURN_IF_ERROR(check("bk", tiles.bk, "k", shape.k));
  STOF_RETURN_IF_ERROR(check("bh", tiles.bh, "h", shape.h));
  return Status::Ok();
}

}  // namespace stof::engine
