// Fuzz target: profile JSON files. Layer profiles (profiler::LoadLayerProfile: `stof-studio
// --open-profile`, the studio's profile view) and single-kernel "stof-profile" files
// (profiler::ProfileFromJson, as written by `stof profile --json`). A loaded layer profile must
// survive LayerProfileToJson -> LayerProfileFromJson.
#include "engine/core/json_io.h"
#include "profiler/layer_profile.h"
#include "profiler/model/profile_export.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  auto layer = profiler::LoadLayerProfile(fuzz::WriteInput(data, size, "fuzz.profile.json"));
  if (layer.IsOk()) {
    auto again = profiler::LayerProfileFromJson(profiler::LayerProfileToJson(*layer), "again");
    fuzz::Require(again.IsOk(), "LayerProfileToJson -> LayerProfileFromJson loads");
  }
  auto j = engine::ParseJson(fuzz::AsString(data, size), "fuzz.json");
  if (!j.IsOk()) return 0;
  auto prof = profiler::ProfileFromJson(*j, "fuzz.json");
  if (prof.IsOk()) {
    auto again = profiler::ProfileFromJson(profiler::ProfileToJson(*prof), "again");
    fuzz::Require(again.IsOk(), "ProfileToJson -> ProfileFromJson loads");
  }
  return 0;
}
