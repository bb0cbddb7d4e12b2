// Fuzz target: JSON mask files, a generator spec or run-length rows (engine::DecodeJsonMask,
// what LoadMask calls for a .json path: `stof --mask m.json`, the studio's Open). A spec file
// also goes through MaskSpecToJson -> MaskSpecFromJson, which must give the spec back. Specs
// with a top-level seq_len over kMaxSpecLen are not decoded: generating a legal composite at
// L = 32768 takes seconds per operand (slow, not a bug; an "or" of 5 bigbirds took 13 s here).
#include "engine/core/json_io.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_json.h"
#include "tests/fuzz/fuzz_input.h"

namespace {
constexpr int64_t kMaxSpecLen = 2048;

bool LargeSpec(const std::string& text) {
  auto j = stof::engine::ParseJson(text, "");
  if (!j.IsOk() || !j->is_object() || !j->contains("spec")) return false;
  const auto& spec = (*j)["spec"];
  if (!spec.is_object() || !spec.contains("seq_len")) return false;
  const auto& L = spec["seq_len"];
  return L.is_number() && L.get<double>() > kMaxSpecLen;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  const std::string text = fuzz::AsString(data, size);
  if (LargeSpec(text)) return 0;
  auto m = engine::DecodeJsonMask(text, "fuzz.json");
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
