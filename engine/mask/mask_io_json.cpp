// JSON mask files (mask_io.h): a generator spec or run-length rows (mask_json.h) inside a
// {"format": "stof-mask", "version": 1, ...} wrapper. LoadMask and SaveMask (mask_io.cpp)
// call DecodeJsonMask and EncodeJsonMask (the latter declared in mask_io_internal.h).
// Invariant: a file written with a spec regenerates the saved mask exactly (EncodeJsonMask
// refuses a spec that does not).
#include "engine/mask/mask_io.h"

#include <string>

#include "engine/core/json_io.h"
#include "engine/mask/mask_io_internal.h"
#include "engine/mask/mask_json.h"

namespace stof::engine {

using mask_io_detail::MaskFileLimit;

namespace {

constexpr const char* kJsonFormat = "stof-mask";
constexpr int kJsonVersion = 1;

// The wrapper's checks: an object of format "stof-mask", version 1, exactly one of "spec"
// and "runs", no other key.
Status CheckJsonWrapper(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object()) return MakeError(name + ": expected a JSON object {\"format\": \"stof-mask\", ...}");
  for (const auto& item : j.items()) {
    const std::string& k = item.key();
    if (k != "format" && k != "version" && k != "spec" && k != "runs") {
      return MakeError(name + ": " + k + ": unknown key (expected format, version, spec or runs)");
    }
  }
  if (!j.contains("format") || !j["format"].is_string() || j["format"] != kJsonFormat) {
    return MakeError(name + ": format: expected \"stof-mask\"" +
                     (j.contains("format") ? ", got " + JsonForMessage(j["format"]) : ", but it is missing"));
  }
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kJsonVersion) {
    return MakeError(name + ": version: expected 1" +
                     (j.contains("version") ? ", got " + JsonForMessage(j["version"]) : ", but it is missing"));
  }
  const bool has_spec = j.contains("spec"), has_runs = j.contains("runs");
  if (has_spec == has_runs) {
    return MakeError(name + ": expected exactly one of \"spec\" and \"runs\", got " +
                     (has_spec ? "both" : "neither"));
  }
  return Status::Ok();
}

Expected<LoadedMask> DecodeJsonObject(const nlohmann::json& j, const std::string& name) {
  STOF_RETURN_IF_ERROR(CheckJsonWrapper(j, name));
  LoadedMask out;
  if (j.contains("runs")) {
    STOF_ASSIGN_OR_RETURN(auto m, MaskFromRunLengthJson(j["runs"], name + ": runs"));
    out.mask = std::move(m);
    return out;
  }
  auto spec = MaskSpecFromJson(j["spec"], name + ": spec");
  if (!spec.IsOk()) return spec.ToStatus();
  if (spec->seq_len > Mask::kMaxLen)
    return MakeError(name + ": spec: seq_len " + std::to_string(spec->seq_len) +
                     " is past a dense mask's " + std::to_string(Mask::kMaxLen) +
                     " (stof mask and stof layout take it as row runs; select, bench mha and "
                     "profile mha its last rows with --q-len)");
  auto m = Generate(*spec);
  if (!m.IsOk()) return MakeError(name + ": spec: " + m.Message());
  out.mask = std::move(*m);
  out.has_spec = true;
  out.spec = std::move(*spec);
  return out;
}

}  // namespace

Expected<MaskSpec> LoadMaskSpec(const std::string& path) {
  STOF_ASSIGN_OR_RETURN(auto format, MaskFormatFromPath(path));
  if (format != MaskFormat::kJson)
    return MakeError(path + ": a generator spec is a .json mask file");
  STOF_ASSIGN_OR_RETURN(auto file, InputFile::Open(path, MaskFileLimit(format)));
  STOF_ASSIGN_OR_RETURN(auto text, file.ReadAll());
  STOF_ASSIGN_OR_RETURN(auto j, ParseJson(text, path));
  STOF_RETURN_IF_ERROR(CheckJsonWrapper(j, path));
  if (!j.contains("spec"))
    return MakeError(path + ": holds the mask's bits (\"runs\"), not a generator spec");
  return MaskSpecFromJson(j["spec"], path + ": spec");
}

namespace mask_io_detail {

Expected<std::string> EncodeJsonMask(const Mask& mask, const MaskSpec* spec) {
  nlohmann::json j = nlohmann::json::object();
  j["format"] = kJsonFormat;
  j["version"] = kJsonVersion;
  if (spec == nullptr) {
    j["runs"] = MaskToRunLengthJson(mask);
    return DumpJson(j) + "\n";
  }
  // The file must regenerate `mask` exactly; refuse a spec that does not.
  auto regenerated = Generate(*spec);
  if (!regenerated.IsOk()) return MakeError("spec: " + regenerated.Message());
  if (*regenerated != mask) {
    return MakeError("spec '" + Describe(*spec) + "' does not regenerate the mask (hash " +
                     regenerated->HashHex() + " vs " + mask.HashHex() + ")");
  }
  j["spec"] = MaskSpecToJson(*spec);
  return DumpJson(j, 2) + "\n";
}

}  // namespace mask_io_detail

Expected<LoadedMask> DecodeJsonMask(const std::string& text, const std::string& name) {
  STOF_ASSIGN_OR_RETURN(auto j, ParseJson(text, name));
  return DecodeJsonObject(j, name);
}

}  // namespace stof::engine
