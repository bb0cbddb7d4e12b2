// What `stof run` and `stof tune` share: the backend behind --device (local = the GPU through
// kernels/, cpu = the fp32 reference), the --mask NAME-or-FILE rule, and --scheme's named
// forms. Used by app/cli/cmd_run.cpp and app/cli/cmd_tune.cpp.
#pragma once

#include <memory>
#include <string>

#include "app/cli/cli_common.h"
#include "engine/backend.h"
#include "engine/fusion/fusion_scheme.h"
#include "engine/graph/op.h"

namespace stof::app {

// nullptr with *error set when the device is unknown or unavailable.
std::unique_ptr<engine::Backend> MakeRunBackend(const std::string& device, std::string* error);
// True when this build has CUDA and a GPU answers.
bool LocalGpuAvailable();

// --mask NAME is a generator name unless a file of that name exists.
void ResolveMaskName(MaskSourceOptions* mask);

// default (greedy templates without chains / GEMM+norm), chains, all, unfused, or a code / hex.
engine::Expected<engine::FusionScheme> SchemeFromText(const std::string& text,
                                                      const engine::OpGraph& g);

}  // namespace stof::app
