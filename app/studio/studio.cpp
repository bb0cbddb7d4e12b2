// Studio (studio.h): state rebuilds and the frame's layout (mask panel left, summary right).
#include "app/studio/studio.h"

#include <imgui.h>

#include "app/studio/panels/mask_panel.h"
#include "app/studio/panels/summary_panel.h"
#include "engine/mask/mask_json.h"

#ifdef STOF_WITH_KERNELS
#include "kernels/device_query.h"
#endif

namespace stof::app {

namespace {
constexpr int64_t kBlockSizes[] = {16, 32, 64, 128};

engine::DeviceSpec PickDevice(const std::string& name) {
  if (!name.empty()) {
    if (auto d = engine::FindBuiltinDevice(name); d.IsOk()) return *d;
  }
#ifdef STOF_WITH_KERNELS
  if (name.empty()) {
    if (auto d = kernels::QueryDeviceSpec(0); d.IsOk()) return *d;
  }
#endif
  return *engine::FindBuiltinDevice("H100-SXM-80GB");
}
}  // namespace

engine::Status Studio::Init(const StudioOptions& options) {
  m_options = options;
  if (!options.device.empty()) {
    if (auto d = engine::FindBuiltinDevice(options.device); !d.IsOk()) return d.ToStatus();
  }
  m_state.device = PickDevice(options.device);
  m_state.spec = options.spec;
  m_state.workload = options.workload;
  for (int i = 0; i < 4; ++i)
    if (kBlockSizes[i] == options.block_m) m_block_choice = i;
  auto mask = engine::Generate(options.spec);
  if (!mask.IsOk()) return mask.ToStatus();
  m_state.mask = std::move(*mask);
  m_state.workload.seq_len = m_state.mask.Rows();
  return Rebuild();
}

engine::Status Studio::Rebuild() {
  const int64_t b = kBlockSizes[m_block_choice];
  auto layout = engine::BlockLayout::Build(m_state.mask, b, b);
  if (!layout.IsOk()) return layout.ToStatus();
  m_state.layout = std::move(*layout);
  m_state.stats = m_state.layout.Stats();
  auto sel = engine::SelectKernel(m_state.mask, m_state.workload, m_state.device);
  if (!sel.IsOk()) return sel.ToStatus();
  m_state.selection = *sel;
  UploadMaskTexture(m_state.mask, &m_mask_texture);
  UploadBlockTexture(m_state.layout, &m_block_texture);
  return engine::Status::Ok();
}

void Studio::Draw() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::Begin("STOF Studio", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus);
  const float side = 360.0f;
  ImGui::BeginChild("mask", ImVec2(ImGui::GetContentRegionAvail().x - side, 0), true);
  DrawMaskPanel(m_state, m_mask_texture, m_block_texture, m_show_blocks);
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("summary", ImVec2(0, 0), true);
  SummaryInput in{m_state, &m_show_blocks, &m_block_choice};
  if (DrawSummaryPanel(in)) {
    if (engine::Status s = Rebuild(); !s.IsOk()) m_error = s.Message();
  }
  if (!m_error.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.4f, 1), "%s", m_error.c_str());
  ImGui::EndChild();
  ImGui::End();
}

namespace {
nlohmann::json StateToJson(const StudioState& s) {
  const engine::LayoutStats& st = s.stats;
  return {{"mask", {{"spec", engine::MaskSpecToJson(s.spec)},
                    {"seq_len", s.mask.Rows()},
                    {"nnz", s.mask.Count()},
                    {"density", s.mask.Density()},
                    {"hash", s.mask.HashHex()}}},
          {"layout", {{"block_m", st.block_m}, {"block_n", st.block_n},
                      {"full_blocks", st.full_blocks}, {"part_blocks", st.part_blocks},
                      {"empty_blocks", st.empty_blocks}}},
          {"device", s.device.name},
          {"workload", {{"batch", s.workload.batch}, {"heads", s.workload.heads},
                        {"seq_len", s.workload.seq_len}, {"head_dim", s.workload.head_dim}}},
          {"selection", {{"kernel", engine::MhaKernelName(s.selection.kernel)},
                         {"threshold", s.selection.eq1.threshold},
                         {"block_m", s.selection.block_m}, {"block_n", s.selection.block_n},
                         {"num_warps", s.selection.num_warps}}}};
}

}  // namespace

nlohmann::json Studio::StateJson() const { return StateToJson(m_state); }

}  // namespace stof::app
