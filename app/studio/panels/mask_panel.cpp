// DrawMaskPanel (mask_panel.h). The preset being edited and the panel's own state are
// MaskPanelUi; a change asks for the mask to be regenerated (one engine::Generate) at once up
// to L = 4096 and when the control is released above, so dragging a slider at L = 16384 does
// not regenerate every frame. The regeneration is one undo step per drag (Studio's gesture).
#include "app/studio/panels/mask_panel.h"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "app/studio/widgets/input_text.h"

namespace stof::app {

namespace {

constexpr int64_t kMinL = 16, kMaxL = 16384, kLiveUpTo = 4096;
constexpr int kMaxUiDepth = 3;

bool Uses(const std::string& p, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (p == n) return true;
  return false;
}

// Back to paper defaults for the length-dependent parameters, operands inheriting L.
void ResetForLength(engine::MaskSpec& s, bool top) {
  s.width = -1;
  s.global = -1;
  s.block = -1;
  if (!top) s.seq_len = 0;
  if (s.pattern == "document") s.doc_lengths.clear();
  for (engine::MaskSpec& o : s.operands) ResetForLength(o, false);
}

// A parameter with a "default" checkbox (value -1): checked, the control is disabled and shows
// `shown_default`; unchecked, `control(&v)` edits the value and returns true when it moved.
template <typename T, typename Control>
bool Defaultable(const char* id, T* value, T shown_default, Control control) {
  bool changed = false;
  bool def = *value < 0;
  ImGui::PushID(id);
  if (ImGui::Checkbox("default", &def)) {
    *value = def ? T(-1) : shown_default;
    changed = true;
  }
  ImGui::SameLine();
  ImGui::BeginDisabled(def);
  T v = def ? shown_default : *value;
  ImGui::SetNextItemWidth(-100);
  if (control(&v) && !def) {
    *value = v;
    changed = true;
  }
  ImGui::EndDisabled();
  ImGui::PopID();
  return changed;
}

// An int64 parameter on a logarithmic slider over [lo, hi].
bool DefaultableInt(const char* label, int64_t* value, int64_t lo, int64_t hi, int64_t shown_default) {
  return Defaultable(label, value, std::clamp(shown_default, lo, hi), [&](int64_t* v) {
    return ImGui::SliderScalar(label, ImGuiDataType_S64, v, &lo, &hi, "%lld", ImGuiSliderFlags_Logarithmic);
  });
}

// A fraction in [0, 1] (0.1 shown as the default).
bool DefaultableFraction(const char* label, const char* id, double* value) {
  return Defaultable(id, value, 0.1, [&](double* v) {
    float f = static_cast<float>(*v);
    const bool moved = ImGui::SliderFloat(label, &f, 0.0f, 1.0f, "%.3f");
    *v = f;
    return moved;
  });
}

// The pattern combo; a composition (or / and / not) gets default operands, other patterns
// lose theirs. Compositions are offered only above kMaxUiDepth.
bool PatternCombo(engine::MaskSpec& s, int depth) {
  bool changed = false;
  ImGui::SetNextItemWidth(-100);
  if (!ImGui::BeginCombo("pattern", s.pattern.c_str())) return false;
  for (const std::string& n : engine::MaskPatternNames()) {
    const bool composition = n == "or" || n == "and" || n == "not";
    if (composition && depth >= kMaxUiDepth) continue;
    if (!ImGui::Selectable(n.c_str(), n == s.pattern)) continue;
    s.pattern = n;
    if (composition && s.operands.empty()) {
      engine::MaskSpec a, b;
      a.pattern = "sliding_window";
      a.seq_len = 0;
      b.pattern = "global";
      b.seq_len = 0;
      s.operands = n == "not" ? std::vector<engine::MaskSpec>{a} : std::vector<engine::MaskSpec>{a, b};
    }
    if (!composition) s.operands.clear();
    if (n == "not" && s.operands.size() > 1) s.operands.resize(1);
    if (n != "document") s.doc_lengths.clear();
    changed = true;
  }
  ImGui::EndCombo();
  return changed;
}

// Random blocks (random_blocks, bigbird): the fill, the block size and the seed.
bool EditRandomBlocks(engine::MaskSpec& s, int64_t L) {
  bool changed = DefaultableFraction("fill f", "fill", &s.fill);
  changed |= DefaultableInt("block b", &s.block, 1, L, std::min<int64_t>(64, L));
  int64_t seed = static_cast<int64_t>(s.seed);
  ImGui::SetNextItemWidth(-100);
  if (ImGui::InputScalar("seed", ImGuiDataType_S64, &seed, nullptr, nullptr, "%lld") && seed >= 0) {
    s.seed = static_cast<uint64_t>(seed);
    changed = true;
  }
  return changed;
}

// "512,256,256" -> {512, 256, 256}; an item that is not a number reads as 0, which the
// generator then refuses by name (each length is 1..L and they sum to L).
std::vector<int64_t> ParseDocLengths(const std::string& text) {
  std::vector<int64_t> docs;
  size_t at = 0;
  while (at < text.size()) {
    const size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    docs.push_back(std::atoll(item.c_str()));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return docs;
}

// Documents: the lengths as text (Enter applies) and an even split into N documents.
bool EditDocuments(engine::MaskSpec& s, int64_t L, MaskPanelUi& ui) {
  bool changed = false;
  std::string text;
  for (int64_t n : s.doc_lengths) {
    if (!text.empty()) text += ',';
    text += std::to_string(n);
  }
  ImGui::SetNextItemWidth(-100);
  if (InputTextString("documents", &text, ImGuiInputTextFlags_EnterReturnsTrue)) {
    s.doc_lengths = ParseDocLengths(text);
    changed = true;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("Document lengths, comma-separated, summing to L; Enter applies");
  int& split = ui.doc_split;
  ImGui::SetNextItemWidth(120);
  ImGui::SliderInt("##split", &split, 1, 32);
  ImGui::SameLine();
  if (ImGui::Button("split evenly")) {
    s.doc_lengths.assign(static_cast<size_t>(split), L / split);
    s.doc_lengths.back() += L - (L / split) * split;
    changed = true;
  }
  return changed;
}

bool EditSpec(engine::MaskSpec& s, int64_t L, int depth, MaskPanelUi& ui);

// A composition's operands, each in a tree node; "remove" above two, "add" unless "not".
bool EditOperands(engine::MaskSpec& s, int64_t L, int depth, MaskPanelUi& ui) {
  bool changed = false;
  const std::string& p = s.pattern;
  for (size_t i = 0; i < s.operands.size(); ++i) {
    ImGui::PushID(static_cast<int>(i));
    const std::string title = "operand " + std::to_string(i) + ": " + s.operands[i].pattern;
    ImGui::SetNextItemOpen(true, ImGuiCond_Once);
    if (ImGui::TreeNode("op", "%s", title.c_str())) {
      changed |= EditSpec(s.operands[i], L, depth + 1, ui);
      if (p != "not" && s.operands.size() > 2 && ImGui::SmallButton("remove operand")) {
        s.operands.erase(s.operands.begin() + static_cast<std::ptrdiff_t>(i));
        changed = true;
        ImGui::TreePop();
        ImGui::PopID();
        break;
      }
      ImGui::TreePop();
    }
    ImGui::PopID();
  }
  if (p != "not" && ImGui::SmallButton("add operand")) {
    engine::MaskSpec o;
    o.pattern = "causal";
    o.seq_len = 0;
    s.operands.push_back(o);
    changed = true;
  }
  return changed;
}

// One spec's controls: the pattern, then the parameters that pattern uses, then the operands
// of a composition (recursively, one level deeper).
bool EditSpec(engine::MaskSpec& s, int64_t L, int depth, MaskPanelUi& ui) {
  bool changed = PatternCombo(s, depth);
  const int64_t sq = std::max<int64_t>(1, std::llround(std::sqrt(static_cast<double>(L))));
  const std::string& p = s.pattern;
  if (Uses(p, {"sliding_window", "dilated", "longformer", "bigbird"}))
    changed |= DefaultableInt("width w", &s.width, 1, L, sq);
  if (Uses(p, {"global", "longformer", "bigbird"}))
    changed |= DefaultableInt("global g", &s.global, 0, L, sq);
  if (p == "dilated") {
    int64_t lo = 0, hi = std::min<int64_t>(L, 64);
    int64_t r = std::max<int64_t>(0, s.dilation);
    ImGui::SetNextItemWidth(-100);
    if (ImGui::SliderScalar("dilation r", ImGuiDataType_S64, &r, &lo, &hi)) {
      s.dilation = r;
      changed = true;
    }
  }
  if (Uses(p, {"random_blocks", "bigbird"})) changed |= EditRandomBlocks(s, L);
  if (p == "document") changed |= EditDocuments(s, L, ui);
  changed |= ImGui::Checkbox("causal (j <= i)", &s.causal);
  if (Uses(p, {"or", "and", "not"})) changed |= EditOperands(s, L, depth, ui);
  return changed;
}

}  // namespace

MaskActions DrawMaskPanel(const MaskView& view, MaskPanelUi& ui) {
  MaskActions actions;
  engine::MaskSpec& spec = ui.preset;
  bool& pending = ui.preset_pending;  // a change at L > 4096 waits for the release
  ImGui::TextUnformatted("Pattern preset");
  ImGui::Separator();
  int64_t L = spec.seq_len;
  bool changed = false;
  int64_t lo = kMinL, hi = kMaxL;
  ImGui::SetNextItemWidth(-100);
  if (ImGui::SliderScalar("length L", ImGuiDataType_S64, &L, &lo, &hi, "%lld", ImGuiSliderFlags_Logarithmic)) {
    spec.seq_len = std::clamp(L, kMinL, kMaxL);
    ResetForLength(spec, true);
    changed = true;
  }
  changed |= EditSpec(spec, spec.seq_len, 0, ui);
  if (ImGui::Button("paper defaults")) {
    ResetForLength(spec, true);
    spec.fill = -1;
    spec.dilation = 1;
    changed = true;
  }
  ImGui::SameLine();
  if (ImGui::Button("regenerate")) changed = true;

  if (changed) {
    if (spec.seq_len <= kLiveUpTo) actions.regenerate = spec;
    else pending = true;
  }
  if (pending && !ImGui::IsAnyItemActive()) {
    pending = false;
    actions.regenerate = spec;
  }
  if (pending) ImGui::TextDisabled("L > %lld: applies when you release the control", static_cast<long long>(kLiveUpTo));

  ImGui::Spacing();
  ImGui::TextUnformatted("Mask");
  ImGui::Separator();
  const engine::Mask& m = *view.mask;
  if (view.spec)
    ImGui::TextWrapped("%s", engine::Describe(*view.spec).c_str());
  else
    ImGui::TextWrapped("edited by hand or loaded from a file (no generator); a preset change regenerates it");
  ImGui::Text("L          %lld x %lld", static_cast<long long>(m.Rows()), static_cast<long long>(m.Cols()));
  // Counting is O(L^2 / 64): per frame only up to L = 4096, above from the last analysis.
  const engine::MaskAnalysis* a = view.analysis;
  if (m.Rows() <= kLiveUpTo || !a) {
    ImGui::Text("nnz        %lld", static_cast<long long>(m.Count()));
    ImGui::Text("density    %.2f %%   sparsity %.2f %%", 100.0 * m.Density(), 100.0 * m.Sparsity());
  } else {
    ImGui::Text("nnz        %lld (last analysis)", static_cast<long long>(a->stats.nnz));
    ImGui::Text("density    %.2f %%   sparsity %.2f %%", 100.0 * a->stats.density, 100.0 * (1 - a->stats.density));
  }
  const engine::MaskHistory& h = *view.history;
  ImGui::Text("undo       %lld steps (%.1f MiB), redo %lld", static_cast<long long>(h.UndoCount()),
              static_cast<double>(h.Bytes()) / (1024.0 * 1024.0), static_cast<long long>(h.RedoCount()));
  ImGui::Spacing();
  ImGui::TextDisabled("Canvas: wheel zooms, right or middle drag pans (left drag in Inspect).");
  ImGui::TextDisabled("Ctrl+Z undo, Ctrl+Y (or Ctrl+Shift+Z) redo.");
  return actions;
}

}  // namespace stof::app
