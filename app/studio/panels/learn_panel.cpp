// DrawLearnPanel and DrawGlossaryPopup (learn_panel.h). The pages' text and checks are in
// learn/learn_tour.cpp; here they are only laid out, with the one diagram drawn by hand.
#include "app/studio/panels/learn_panel.h"

#include <imgui.h>

#include <algorithm>
#include <vector>

namespace stof::app {

namespace {

constexpr ImU32 kCi = IM_COL32(70, 120, 200, 255);   // as the Fusion tab: GEMMs
constexpr ImU32 kMi = IM_COL32(200, 130, 60, 255);   // softmax parts
constexpr ImU32 kDram = IM_COL32(235, 110, 110, 255);
constexpr ImU32 kText = IM_COL32(235, 235, 240, 255);

struct Box {
  const char* text;
  bool ci;
};
struct Row {
  const char* name;
  std::vector<Box> boxes;
  std::vector<const char*> arrows;  // what crosses DRAM between boxes i and i + 1
};

// U, SD, SDF, F: the kernels of each rung (boxes) and what each passes to the next through
// DRAM (arrows). Widths follow the text; a row wider than the tab wraps into the next line.
void DrawRecompositionDiagram() {
  const std::vector<Row> rows = {
      {"U", {{"QK^T GEMM", true}, {"scale+mask+softmax", false}, {"PV GEMM", true}}, {"S (L x L)", "P (L x L)"}},
      {"SD", {{"QK^T GEMM", true}, {"LS", false}, {"IR", false}, {"GS", false}, {"PV GEMM", true}},
       {"S (L x L)", "x', m', d'", "r'", "P (L x L)"}},
      {"SDF", {{"QK^T GEMM + LS", true}, {"IR", false}, {"GS + PV GEMM", true}}, {"x' (valid tiles), m', d'", "r'"}},
      {"F", {{"one kernel: QK^T, online softmax, PV (S stays on chip)", true}}, {}},
  };
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float h = ImGui::GetTextLineHeight() + 8, pad = 6, gap_min = 24;
  const float left = ImGui::GetCursorScreenPos().x, right = left + ImGui::GetContentRegionAvail().x;
  float y = ImGui::GetCursorScreenPos().y + 4;
  const float name_w = ImGui::CalcTextSize("SDF  ").x + 6;
  for (const Row& r : rows) {
    dl->AddText(ImVec2(left, y + 4), kText, r.name);
    float x = left + name_w;
    for (size_t i = 0; i < r.boxes.size(); ++i) {
      const float w = ImGui::CalcTextSize(r.boxes[i].text).x + 2 * pad;
      if (x + w > right && x > left + name_w) {  // wrap
        x = left + name_w;
        y += h + 10;
      }
      dl->AddRectFilled(ImVec2(x, y), ImVec2(x + w, y + h), r.boxes[i].ci ? kCi : kMi, 4);
      dl->AddText(ImVec2(x + pad, y + 4), IM_COL32(255, 255, 255, 255), r.boxes[i].text);
      x += w;
      if (i < r.arrows.size()) {
        const float aw = std::max(gap_min, ImGui::CalcTextSize(r.arrows[i]).x + 10);
        if (x + aw > right) {
          x = left + name_w;
          y += h + 10;
        }
        const float my = y + h * 0.5f;
        dl->AddLine(ImVec2(x + 2, my), ImVec2(x + aw - 4, my), kDram, 2);
        dl->AddTriangleFilled(ImVec2(x + aw - 2, my), ImVec2(x + aw - 9, my - 4), ImVec2(x + aw - 9, my + 4), kDram);
        dl->AddText(ImVec2(x + 5, y - ImGui::GetTextLineHeight() + 2), kDram, r.arrows[i]);
        x += aw;
      }
    }
    y += h + ImGui::GetTextLineHeight() + 8;
  }
  ImGui::Dummy(ImVec2(right - left, y - ImGui::GetCursorScreenPos().y));
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyle().Colors[ImGuiCol_TextDisabled]);
  ImGui::TextWrapped("Blue: GEMMs (compute-intensive); orange: softmax parts (memory-intensive); red "
                     "arrows: what goes through DRAM between kernels.");
  ImGui::PopStyleColor();
}

void LessonList(LearnPanelActions* a) {
  ImGui::TextWrapped("Three short lessons. Each sets up the real views (the mask, the block size, the layer), "
                     "explains what they show with their live numbers, and ends with a question you answer "
                     "by changing one thing in a view. Numbers are predictions by the analytical models "
                     "unless a view measured them on a GPU; each says which.");
  ImGui::Spacing();
  for (int i = 0; i < static_cast<int>(Lessons().size()); ++i) {
    ImGui::PushID(i);
    if (ImGui::Button("Start")) a->open_lesson = i;
    ImGui::SameLine();
    ImGui::TextUnformatted(Lessons()[static_cast<size_t>(i)].title.c_str());
    ImGui::PopID();
  }
  ImGui::Spacing();
  if (ImGui::Button("Glossary")) a->glossary = true;
  ImGui::SameLine();
  ImGui::TextDisabled("also from the Glossary button beside the tabs, in every view");
}

void PageNav(const LearnState& s, LearnPanelActions* a) {
  const int pages = Lessons()[static_cast<size_t>(s.lesson)].pages;
  if (ImGui::SmallButton("Lessons")) a->open_lesson = -1;
  ImGui::SameLine();
  ImGui::BeginDisabled(s.page == 0);
  if (ImGui::SmallButton("Back")) a->page_step = -1;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(s.page + 1 >= pages);
  if (ImGui::SmallButton("Next")) a->page_step = 1;
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::TextDisabled("page %d of %d", s.page + 1, pages);
}

}  // namespace

LearnPanelActions DrawLearnPanel(const LearnState& s, const LessonPage& page) {
  LearnPanelActions a;
  if (s.lesson < 0 || s.lesson >= static_cast<int>(Lessons().size())) {
    LessonList(&a);
    return a;
  }
  ImGui::TextUnformatted(Lessons()[static_cast<size_t>(s.lesson)].title.c_str());
  PageNav(s, &a);
  ImGui::Separator();
  ImGui::TextUnformatted(page.title.c_str());
  ImGui::Spacing();
  for (const std::string& p : page.paragraphs) {
    ImGui::TextWrapped("%s", p.c_str());
    ImGui::Spacing();
  }
  if (page.diagram) DrawRecompositionDiagram();
  if (!page.view.empty()) {
    const char* tab = page.view == "layout" ? "Show the Block layout tab" : "Show the Fusion tab";
    if (ImGui::SmallButton(tab)) a.show_view = page.view;
    ImGui::SameLine();
  }
  if (ImGui::SmallButton("Glossary")) a.glossary = true;
  if (page.question) {
    ImGui::Separator();
    ImGui::TextColored(ImVec4(0.95f, 0.85f, 0.4f, 1), "Question");
    ImGui::TextWrapped("%s", page.question_text.c_str());
    ImGui::Spacing();
    if (page.answered) ImGui::TextColored(ImVec4(0.45f, 0.85f, 0.45f, 1), "Answered");
    else ImGui::TextDisabled("Waiting for your change");
    ImGui::TextWrapped("%s", page.answer.c_str());
  }
  return a;
}

void DrawGlossaryPopup(bool* open) {
  if (*open && !ImGui::IsPopupOpen("Glossary")) ImGui::OpenPopup("Glossary");
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowSize(ImVec2(std::min(760.0f, vp->WorkSize.x - 40), std::min(620.0f, vp->WorkSize.y - 40)),
                           ImGuiCond_Appearing);
  ImGui::SetNextWindowPos(vp->GetCenter(), ImGuiCond_Appearing, ImVec2(0.5f, 0.5f));
  if (ImGui::BeginPopupModal("Glossary", open)) {
    for (const GlossaryEntry& e : Glossary()) {
      ImGui::TextColored(ImVec4(0.55f, 0.75f, 1.0f, 1), "%s", e.term.c_str());
      ImGui::Indent();
      ImGui::TextWrapped("%s", e.text.c_str());
      ImGui::Unindent();
      ImGui::Spacing();
    }
    if (ImGui::Button("Close") || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape))) {
      *open = false;
      ImGui::CloseCurrentPopup();
    }
    ImGui::EndPopup();
  }
}

}  // namespace stof::app
