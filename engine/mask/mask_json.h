// JSON form of masks: a MaskSpec as {"pattern": ..., params...} and inline masks as run-length
// rows. Shared by mask files (mask_io) and plans (plan/). Errors carry the JSON path
// ("mask.operands[1].width: expected an integer").
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::engine {

nlohmann::json MaskSpecToJson(const MaskSpec& spec);
// `path` is the JSON path of `j` used in messages ("plan.json: mask.generator").
Expected<MaskSpec> MaskSpecFromJson(const nlohmann::json& j, const std::string& path);

// Run-length rows: {"rows": R, "cols": C, "runs": [[start, length, start, length, ...], ...]}
// one array per row, runs of attended columns in increasing order.
nlohmann::json MaskToRunLengthJson(const Mask& mask);
Expected<Mask> MaskFromRunLengthJson(const nlohmann::json& j, const std::string& path);

}  // namespace stof::engine
