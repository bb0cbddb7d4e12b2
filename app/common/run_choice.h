// The MHA configuration the engine runs, for the front ends that show it: the engine's one
// choice (engine::ChooseMhaRun: Eq. 1 / Eq. 2 within the supported and preferred set, and on
// sm_90 the Hopper kernel where its tile model says faster) over the kernels' own rules
// (kernels::MhaCapabilities), as an engine::MhaRunChooser, for any device spec, so a machine
// without a GPU shows what an H100 would run. A build without kernels has none: engine::ChooseRun
// then runs the same choice over the engine's model of those rules (ModelMhaRun,
// engine/analysis/mha_run.h, which also holds the JSON and text forms).
#pragma once

#include "engine/analysis/mha_run.h"

namespace stof::app {

engine::MhaRunChooser MakeMhaRunChooser();

}  // namespace stof::app
