// Where the studio finds the project's assets/ folder (example masks, plans and the H100
// profiles it offers while the profile view is empty, and the Learn tab's lessons): the
// STOF_ASSETS_DIR environment variable, else the folder next to the build (compiled in as
// STOF_SOURCE_ASSETS), else ../../assets from the executable (build/app/stof-studio).
// Used by LayerWorkbench and the Learn tab; a missing folder gives "" and empty lists, never an
// error.
#pragma once

#include <string>
#include <vector>

namespace stof::app {

std::string AssetsDir();
// assets/profiles/*.profile.json, sorted by name; empty when there is no assets folder.
std::vector<std::string> ShippedProfiles();

}  // namespace stof::app
