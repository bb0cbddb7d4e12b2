// DrawExportPanel (export_panel.h). The mask is written by Studio's SaveJob (a PNG of
// L = 16384 takes seconds: stb's deflate, see mask_io); layouts and plans are small (one entry
// per block) and written at once. The path fields live in ExportPanelUi, kept by Studio.
#include "app/studio/panels/export_panel.h"

#include <imgui.h>

#include <string>

#include "app/studio/widgets/input_text.h"

namespace stof::app {

namespace {

// A path field and a button, ids unique per row.
bool PathRow(const char* id, std::string* path, const char* button) {
  ImGui::PushID(id);
  ImGui::SetNextItemWidth(-120);
  InputTextString("##path", path);
  ImGui::SameLine();
  const bool clicked = ImGui::Button(button, ImVec2(110, 0));
  ImGui::PopID();
  return clicked;
}

void CommandBox(const char* id, const std::string& command) {
  ImGui::PushID(id);
  ImGui::PushTextWrapPos(ImGui::GetContentRegionAvail().x - 70);
  ImGui::TextUnformatted(command.c_str());
  ImGui::PopTextWrapPos();
  ImGui::SameLine(ImGui::GetContentRegionAvail().x - 60);
  if (ImGui::Button("Copy")) ImGui::SetClipboardText(command.c_str());
  ImGui::PopID();
}

}  // namespace

ExportActions DrawExportPanel(const ExportView& view, ExportPanelUi& ui) {
  ExportActions a;
  ImGui::TextUnformatted("Mask (.png, .npy or .json; JSON keeps the generator spec)");
  ImGui::Separator();
  ImGui::BeginDisabled(view.saving);
  if (PathRow("mask", &ui.mask_path, "Save mask")) a.save_mask = ui.mask_path;
  ImGui::EndDisabled();

  ImGui::Spacing();
  ImGui::Text("Block layout at %lld x %lld", static_cast<long long>(view.block_m),
              static_cast<long long>(view.block_n));
  ImGui::Separator();
  const char* formats[] = {"JSON (CSR arrays, bitmaps)", "FlexAttention BlockMask JSON",
                           "PNG (one pixel per block)", "NPY (u1 block classes)"};
  ImGui::SetNextItemWidth(-120);
  ImGui::Combo("format", &ui.layout_format, formats, 4);
  if (PathRow("layout", &ui.layout_path, "Export layout")) {
    a.export_layout = ui.layout_path;
    a.layout_format = static_cast<engine::LayoutExportFormat>(ui.layout_format);
  }
  ImGui::TextDisabled("PNG: empty 0, part 128, full 255.  NPY: empty 0, part 1, full 2.");

  ImGui::Spacing();
  ImGui::TextUnformatted("Plan (device, workload, mask, Eq. 1 + Eq. 2 choice)");
  ImGui::Separator();
  if (PathRow("plan", &ui.plan_path, "Export plan")) a.export_plan = ui.plan_path;

  ImGui::Spacing();
  ImGui::TextUnformatted("The same view from the command line");
  ImGui::Separator();
  const CliCommands& c = view.commands;
  CommandBox("layout_cmd", c.layout);
  CommandBox("select_cmd", c.select);
  if (!c.note.empty()) ImGui::TextColored(ImVec4(0.94f, 0.89f, 0.26f, 1.0f), "%s", c.note.c_str());
  if (ImGui::Button("Copy both")) ImGui::SetClipboardText((c.layout + "\n" + c.select + "\n").c_str());
  return a;
}

}  // namespace stof::app
