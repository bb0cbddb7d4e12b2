// Learn tab: the lesson list, then one page of a lesson at a time (its text with the live
// numbers, the U / SD / SDF / F diagram in lesson 2, the question and whether the change the
// student made answers it), and the glossary popup that every view's tab bar opens.
// Studio-independent like profile_panel.h: it draws a LessonPage (learn/learn_tour.h, built
// by the studio from the live views) and returns the actions for the studio to take.
#pragma once

#include <optional>
#include <string>

#include "app/studio/learn/learn_tour.h"

namespace stof::app {

struct LearnPanelActions {
  std::optional<int> open_lesson;  // 0-based; -1 = back to the lesson list
  int page_step = 0;               // +1 Next, -1 Back
  std::string show_view;           // a tab to switch to ("layout", "fusion", ...)
  bool glossary = false;           // open the glossary
};

// `page`: the current page of state.lesson (ignored on the lesson list, state.lesson < 0).
LearnPanelActions DrawLearnPanel(const LearnState& state, const LessonPage& page);

// The glossary as a popup window while *open (closed by its button or Escape).
void DrawGlossaryPopup(bool* open);

}  // namespace stof::app
