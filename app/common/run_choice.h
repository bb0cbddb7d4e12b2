// The MHA configuration the engine runs, for the front ends that show it (the studio's Kernel
// selection view, `stof select`): a chooser over the kernels' own rules
// (kernels::ChooseMhaConfig: Eq. 1 / Eq. 2 within the supported and preferred set, and on
// sm_90 the Hopper kernel where its tile model says faster), for any device spec, so a machine
// without a GPU shows what an H100 would run. Empty in a build without kernels.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "engine/analysis/layout_analysis.h"

namespace stof::app {

engine::MhaRunChooser MakeMhaRunChooser();

nlohmann::json RunChoiceJson(const engine::MhaRunChoice& c);
// "block_wise 64x128, 5 warps: Hopper kernel (wgmma, TMA, warp-specialized); kernel from eq1,
// parameters from hopper tile model"
std::string RunChoiceText(const engine::MhaRunChoice& c);

}  // namespace stof::app
