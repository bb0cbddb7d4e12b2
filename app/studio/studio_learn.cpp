// Studio's Learn commands (studio.h): opening a lesson, stepping its pages, applying a page's
// setup to the real views, and the current page built from their live results (the lessons'
// facts gathered here from the document, the analysis and the layer workbench).
#include <algorithm>

#include "app/studio/studio.h"

namespace stof::app {

void Studio::OpenLesson(int lesson) {
  m_learn.memory = LearnMemory{};
  m_learn.page = 0;
  m_learn.transcript.clear();
  if (lesson < 0 || lesson >= static_cast<int>(Lessons().size())) {
    m_learn.lesson = -1;
    return;
  }
  m_learn.lesson = lesson;
  ApplyLessonSetup(PageSetup(lesson, 0));
}

void Studio::StepLesson(int delta) {
  if (m_learn.lesson < 0) return;
  const int pages = Lessons()[static_cast<size_t>(m_learn.lesson)].pages;
  const int page = std::clamp(m_learn.page + delta, 0, pages - 1);
  if (page == m_learn.page) return;
  m_learn.transcript.push_back(LessonPageJson(m_learn.lesson, m_learn.page, CurrentLessonPage()));
  m_learn.page = page;
  ApplyLessonSetup(PageSetup(m_learn.lesson, page));
  // The question compares the student's change with the figures shown so far.
  if (page == pages - 1) RememberForQuestion(m_learn.lesson, CurrentLearnFacts(), &m_learn.memory);
}

void Studio::ApplyLessonSetup(const LessonSetup& s) {
  if (s.mask) {
    const auto want = engine::Resolve(*s.mask);
    if (!want.IsOk() || !Doc().state.spec || !(*Doc().state.spec == *want)) {
      ApplySpec(*s.mask, /*record=*/true);
      if (Doc().state.spec) m_mask_ui.preset = *Doc().state.spec;  // the Mask tab shows it
    }
  }
  if (s.block) SetBlockSize(s.block->first, s.block->second);
  if (s.batch) m_workbench->SetChoice(LayerChoice{studio_defaults::kModel, "", *s.batch});
  if (s.device)
    for (size_t i = 0; i < m_devices.devices.size(); ++i)
      if (m_devices.devices[i].name == *s.device) SetDevice(static_cast<int>(i));
  if (s.default_scheme) m_workbench->ResetScheme();
}

LearnFacts Studio::CurrentLearnFacts() const {
  LearnFacts f = GatherLearnFacts(Doc().state.mask, Doc().state.spec, AnalysisReady() ? Analysis() : nullptr,
                                  Device().name);
  const LayerWorkbench& bench = *m_workbench;
  f.ladder = bench.Ladder();
  f.run = bench.RunChoice();
  if (const engine::OpGraph* g = bench.Graph()) {
    f.model = g->model;
    f.batch = g->batch;
  }
  for (const SegmentView& v : bench.Segments()) f.segments.push_back(SegmentFact(v));
  f.tradeoffs = bench.Tradeoffs();
  f.norm_by_device = bench.NormByDevice();
  return f;
}

LessonPage Studio::CurrentLessonPage() const {
  if (m_learn.lesson < 0) return LessonPage{};
  return BuildPage(m_learn.lesson, m_learn.page, CurrentLearnFacts(), m_learn.memory);
}

}  // namespace stof::app
