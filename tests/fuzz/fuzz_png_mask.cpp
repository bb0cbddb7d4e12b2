// Fuzz target: PNG mask files (engine::DecodePng, what LoadMask calls for a .png path: `stof
// --mask m.png`, the studio's Open and drag-and-drop). A decoded mask must survive the
// documented round trip EncodePng -> DecodePng unchanged.
#include "engine/mask/mask_io.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  auto m = engine::DecodePng(fuzz::AsString(data, size), "fuzz.png");
  if (!m.IsOk()) return 0;
  auto png = engine::EncodePng(*m);
  fuzz::Require(png.IsOk(), "EncodePng of a decoded mask works");
  auto again = engine::DecodePng(*png, "again.png");
  fuzz::Require(again.IsOk() && *again == *m, "EncodePng -> DecodePng gives the mask back");
  return 0;
}
