// Fuzz target: NPY mask files (engine::DecodeNpy, what LoadMask calls for a .npy path: `stof
// --mask m.npy`, the studio's Open and drag-and-drop). A decoded mask must survive the
// documented round trip EncodeNpy -> DecodeNpy unchanged.
#include "engine/mask/mask_io.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  auto m = engine::DecodeNpy(fuzz::AsString(data, size), "fuzz.npy");
  if (!m.IsOk()) return 0;
  auto again = engine::DecodeNpy(engine::EncodeNpy(*m), "again.npy");
  fuzz::Require(again.IsOk() && *again == *m, "EncodeNpy -> DecodeNpy gives the mask back");
  return 0;
}
