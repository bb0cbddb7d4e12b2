// Profile view: the list of layer profiles (measured here, or opened from a `stof profile
// layer` JSON), one of them current and optionally one pinned as the baseline, and the
// current one drawn as a kernel table, a kernel timeline, grouped bars per kernel and per
// segment, a roofline of the segments and a latency histogram, each beside the baseline when
// one is pinned. Studio-independent: it draws a ProfilePanelState (profile_view_state.h, owned
// by LayerWorkbench) once per frame and returns the actions for the studio to take (profile
// now, open a file). A part without data shows a one-line reason, never an empty plot.
#pragma once

#include <string>

#include "app/studio/profile_view_state.h"

namespace stof::app {

struct ProfilePanelActions {
  bool profile_now = false;  // "Profile now" was pressed
  bool open = false;         // "Open" was pressed; open_path holds the path
  std::string open_path;
};

// Draws the panel into the current window. `can_profile`: a GPU and a layer are ready;
// `status_line`: the studio's word on profiling ("profiling segment 3/9", "no GPU: open a
// profile measured elsewhere"), shown next to the button.
ProfilePanelActions DrawProfilePanel(ProfilePanelState& s, bool can_profile,
                                     const std::string& status_line);

}  // namespace stof::app
