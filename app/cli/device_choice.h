// --device for the CLI, one meaning in every command: the device the command runs on or
// predicts for. Its words: local (this machine's GPU, queried through kernels/device_query.h
// in a CUDA build), cpu (the fp32 CPU reference backend; only where layers run), a built-in
// name or alias (h100: predicted by the analytical models), auto (local when there is a usable
// GPU, else the H100 built-in, predicted) and predict (the H100 built-in, predicted; kept for
// scripts). Each command takes the words that make sense for it and refuses the others saying
// why (docs/user-guide.md, "Conventions").
#pragma once

#include <optional>
#include <string>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"

namespace stof::app {

// The spec of local, a built-in, auto or predict; cpu is refused (no GPU to model).
engine::Expected<engine::DeviceSpec> ResolveDevice(const std::string& name);
// The --device help: the meaning above, then "Here: <accepted>".
std::string DeviceOptionHelp(const std::string& accepted = "local, a built-in name, auto");
// The built-in a word predicts for: a built-in name or alias, "predict" (the H100); nullopt
// for local, cpu and auto (the caller decides those).
std::optional<engine::DeviceSpec> PredictedDevice(const std::string& word);
// True when this build has CUDA and a usable GPU (auto's choice).
bool LocalGpuPresent();

}  // namespace stof::app
