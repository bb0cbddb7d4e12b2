// Fuzz target: JSON mask files, a generator spec or run-length rows (engine::DecodeJsonMask,
// what LoadMask calls for a .json path: `stof --mask m.json`, the studio's Open). A spec file
// also goes through MaskSpecToJson -> MaskSpecFromJson, which must give the spec back.
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_json.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  auto m = engine::DecodeJsonMask(fuzz::AsString(data, size), "fuzz.json");
  if (!m.IsOk()) return 0;
  if (m->has_spec) {
    auto again = engine::MaskSpecFromJson(engine::MaskSpecToJson(m->spec), "again");
    fuzz::Require(again.IsOk() && engine::MaskSpecToJson(*again) == engine::MaskSpecToJson(m->spec),
                  "MaskSpecToJson -> MaskSpecFromJson gives the spec back");
  } else {
    auto again = engine::MaskFromRunLengthJson(engine::MaskToRunLengthJson(m->mask), "again");
    fuzz::Require(again.IsOk() && *again == m->mask, "run-length rows round trip");
  }
  return 0;
}
