// Fuzz target: HuggingFace config.json files (engine::ParseModelConfigJson, what LoadModelConfig
// calls: `stof graph|tune|run --config`, `stof-studio --config`), with and without a fallback
// family, then the layer graph built from the config (engine::BuildLayerGraph) at a small shape.
// A parsed config must pass its own Validate.
#include "engine/graph/graph_build.h"
#include "engine/graph/model_config.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stof;
  const std::string text = fuzz::AsString(data, size);
  const engine::ModelFamily gpt2 = engine::ModelFamily::kGpt2;
  const engine::ModelFamily* const fallbacks[] = {nullptr, &gpt2};
  for (const engine::ModelFamily* fallback : fallbacks) {
    auto cfg = engine::ParseModelConfigJson(text, "config.json", fallback);
    if (!cfg.IsOk()) continue;
    fuzz::Require(cfg->Validate("again").IsOk(), "a parsed config validates");
    engine::GraphRequest r;
    r.model = *cfg;
    r.batch = 1;
    r.seq_len = 64;
    (void)engine::BuildLayerGraph(r);
  }
  return 0;
}
