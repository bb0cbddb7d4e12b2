// DrawLayerChooser (layer_chooser.h). The widgets edit a copy of the view's choice; a preset
// picked or a batch entered applies at once, a config.json path only on its button.
#include "app/studio/panels/layer_chooser.h"

#include <imgui.h>

#include <algorithm>

#include "app/studio/widgets/error_text.h"
#include "app/studio/widgets/input_text.h"
#include "engine/core/workload.h"
#include "engine/graph/model_config.h"

namespace stof::app {

LayerChooserActions DrawLayerChooser(const LayerChooserView& view) {
  LayerChooserActions actions;
  LayerChoice c = view.choice;
  ImGui::SetNextItemWidth(130);
  if (ImGui::BeginCombo("model", c.config_path.empty() ? c.model.c_str() : "config.json")) {
    for (const engine::ModelConfig& m : engine::ModelPresets()) {
      if (ImGui::Selectable(m.name.c_str(), c.config_path.empty() && m.name == c.model)) {
        c.model = m.name;
        c.config_path.clear();
        actions.apply = true;
      }
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::SetNextItemWidth(90);
  int batch = static_cast<int>(c.batch);
  if (ImGui::InputInt("batch", &batch, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue)) {
    c.batch = std::clamp<int64_t>(batch, 1, engine::Workload::kMaxBatch);
    actions.apply = true;
  }
  ImGui::SameLine();
  ImGui::Text("L = %lld (the editor's mask)", static_cast<long long>(view.seq_len));
  ImGui::SetNextItemWidth(260);
  InputTextString("##config", &c.config_path);
  ImGui::SameLine();
  if (ImGui::Button("Use config.json")) actions.apply = true;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("A HuggingFace config.json (bert, gpt2, t5); empty = the preset");
  if (!view.graph_error.empty()) ErrorTextWrapped(view.graph_error);
  if (!(c == view.choice)) actions.choice = c;
  return actions;
}

}  // namespace stof::app
