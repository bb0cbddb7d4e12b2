// The Learn tab's guided tour, without ImGui: three lessons, each a few pages that set up the
// real views (the mask, the block size, the layer) and explain what they show with the live
// numbers those views computed, ending in a question the student answers by changing one
// thing in a view; the page sees the change and explains the answer with the new numbers.
//   1. Block-sparse layouts and wasted work (BigBird at 128 x 128 and 64 x 64, why, and what
//      FlexAttention's 128 x 128 costs); answered by choosing a block size.
//   2. Softmax recomposition (U, SD, SDF, F: bytes and time per rung of the fusion ladder, why
//      SD alone loses and SDF wins); answered by changing L.
//   3. Fusion trade-offs (a layer's segments, GEMM + epilogue, GEMM + LayerNorm on this device
//      or the chosen built-in one); answered by changing the device.
// Every number is a prediction unless the view measured it (the ladder on a GPU), and the
// page says which. panels/learn_panel.cpp draws LessonPage and applies LessonSetup through
// Studio; batch_driver.cpp runs a lesson from start to end for --learn N; docs/learn.md holds
// the same text. Studio fills LearnFacts from its models (studio_learn.cpp: the mask's part
// through GatherLearnFacts, the layer's from LayerWorkbench); everything here is a pure
// function of the facts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/studio/layer_types.h"
#include "engine/analysis/layout_analysis.h"
#include "engine/analysis/mha_run.h"
#include "engine/layout/block_layout.h"
#include "engine/layout/block_size_table.h"
#include "engine/layout/layout_work.h"
#include "engine/mask/mask_spec.h"
#include "engine/tune/fusion_tradeoff.h"
#include "engine/tune/ladder.h"

namespace stof::app {

// The live numbers the lessons cite: copies of what the views already computed.
struct LearnFacts {
  bool analysis_ready = false;     // the layout figures are for the current mask and size
  int64_t seq_len = 0;
  std::optional<engine::MaskSpec> spec;  // resolved, when the mask has a generator
  engine::LayoutStats at_block, at_flex;  // the chosen block size, FlexAttention's 128 x 128
  engine::LayoutWork work_block, work_flex;
  std::vector<engine::BlockSizeRow> table;
  std::vector<engine::LadderRung> ladder;  // the layer's attention, predicted or measured
  std::string device;              // the device the views predict for (or measure on)
  std::string model;               // "bert-base"
  int64_t batch = 0;               // the layer's batch
  std::vector<std::string> segments;  // "[#2-#6] sparse_mha 31.2 us" per segment of the scheme
  std::vector<engine::FusionTradeoff> tradeoffs;
  std::vector<engine::TradeoffOnDevice> norm_by_device;  // GEMM + LayerNorm on each built-in
  std::optional<engine::MhaRunChoice> run;
};
// The mask's and the layout's facts (the layer's are the caller's to add). `ready_analysis`:
// the shown analysis when it matches the current mask and choices, else null (the layout
// figures are then left out); `device`: the name of the device the views predict for.
LearnFacts GatherLearnFacts(const engine::Mask& mask, const std::optional<engine::MaskSpec>& spec,
                            const engine::MaskAnalysis* ready_analysis, const std::string& device);
// "[#2-#6] sparse_mha 31.2 us": a segment of the fusion view as LearnFacts::segments cites it.
std::string SegmentFact(const SegmentView& v);

// What a page changes in the studio when it opens (unset fields stay as they are).
struct LessonSetup {
  std::optional<engine::MaskSpec> mask;  // regenerate the mask from this generator
  std::optional<std::pair<int64_t, int64_t>> block;
  std::optional<int64_t> batch;          // the layer's batch (model bert-base)
  std::optional<std::string> device;     // a device of the Kernel selection tab's list
  bool default_scheme = false;           // the layer's default fusion scheme
};

// What a question page compares the answer with, recorded when it opened.
struct LearnMemory {
  bool set = false;
  double lead = 0;         // lesson 2: U's time over F's
  int64_t seq_len = 0;     // lesson 2: L then
  bool norm_pays = false;  // lesson 3: GEMM + LayerNorm fusion paid then
  std::string device;      // lesson 3: on this device
};

struct LessonPage {
  std::string title;
  std::vector<std::string> paragraphs;  // with the live numbers
  std::string view;                     // the tab that shows this ("layout", "fusion", ...)
  bool diagram = false;                 // lesson 2: draw the U / SD / SDF / F diagram
  // The real views' parts shown under the text (the Fusion tab's, live).
  bool show_ladder = false, show_segments = false;
  bool question = false;                // the lesson's last page
  std::string question_text;
  bool answered = false;
  std::string answer;                   // once answered: why, with the new numbers; else a hint
};

struct LessonInfo {
  std::string title;
  int pages = 0;
};
const std::vector<LessonInfo>& Lessons();

// Lesson and page are 0-based and in range (the callers clamp).
LessonSetup PageSetup(int lesson, int page);
// Records what the question page compares with (called when that page opens).
void RememberForQuestion(int lesson, const LearnFacts& f, LearnMemory* memory);
LessonPage BuildPage(int lesson, int page, const LearnFacts& f, const LearnMemory& memory);
// The one change a student makes to answer lesson `lesson`'s question, found from the live
// numbers (--learn N applies it at the end): nullopt when no change answers it here.
std::optional<LessonSetup> DemoAnswer(int lesson, const LearnFacts& f, const LearnMemory& memory);

// The tab's state: which lesson and page (lesson -1: the overview), what the question page
// remembered.
struct LearnState {
  int lesson = -1, page = 0;
  LearnMemory memory;
  bool glossary_open = false;   // the glossary popup, reachable from every view
  // Each page as it read when the student left it (LessonPageJson), since the lesson opened:
  // --dump-state writes it, docs/learn.md quotes it.
  std::vector<nlohmann::json> transcript;
};

struct GlossaryEntry {
  std::string term, text;
};
// BSR, full / part / empty block, CI / MI, SD / SDF, fusion scheme, and the other words the
// views use.
const std::vector<GlossaryEntry>& Glossary();

// {"lesson", "page", "pages", "title", "paragraphs", "question", "answered", "answer"}: what
// --dump-state writes under "learn".
nlohmann::json LessonPageJson(int lesson, int page, const LessonPage& p);

}  // namespace stof::app
