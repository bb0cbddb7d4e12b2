// MaskDocument and EditCommand (mask_document.h).
#include "app/studio/mask_document.h"

#include <utility>

namespace stof::app {

EditCommand EditCommand::Brush(int64_t r, int64_t c, int64_t size, const engine::EditOptions& o) {
  return {Kind::kBrush, r, c, r, c, size, o};
}

EditCommand EditCommand::Line(int64_t r0, int64_t c0, int64_t r1, int64_t c1, int64_t size,
                              const engine::EditOptions& o) {
  return {Kind::kLine, r0, c0, r1, c1, size, o};
}

EditCommand EditCommand::Rect(int64_t r0, int64_t c0, int64_t r1, int64_t c1, const engine::EditOptions& o) {
  return {Kind::kRect, r0, c0, r1, c1, 1, o};
}

EditCommand EditCommand::Band(int64_t r, int64_t c, int64_t width, const engine::EditOptions& o) {
  return {Kind::kBand, r, c, r, c, width, o};
}

engine::Expected<engine::CellRect> MaskDocument::Apply(const EditCommand& e) {
  engine::Mask* mask = &m_doc.state.mask;
  engine::Expected<engine::CellRect> changed = engine::CellRect{};
  switch (e.kind) {
    case EditCommand::Kind::kBrush: changed = engine::PaintBrush(mask, e.r0, e.c0, e.size, e.options); break;
    case EditCommand::Kind::kLine: changed = engine::PaintLine(mask, e.r0, e.c0, e.r1, e.c1, e.size, e.options); break;
    case EditCommand::Kind::kRect: changed = engine::PaintRect(mask, e.r0, e.c0, e.r1, e.c1, e.options); break;
    case EditCommand::Kind::kBand: changed = engine::PaintBand(mask, e.r0, e.c0, e.size, e.options); break;
  }
  if (changed.IsOk() && !changed->Empty()) {
    m_doc.state.spec.reset();
    ++m_doc.version;
    m_doc.dirty = true;
  }
  return changed;
}

void MaskDocument::Replace(engine::MaskState state, bool dirty) {
  m_doc.state = std::move(state);
  ++m_doc.version;
  m_doc.dirty = m_doc.dirty || dirty;
}

engine::Expected<std::string> MaskDocument::Step(bool redo) {
  auto r = redo ? m_history.Redo(&m_doc.state) : m_history.Undo(&m_doc.state);
  if (r.IsOk()) {
    ++m_doc.version;
    m_doc.dirty = true;
  }
  return r;
}

void MaskDocument::MarkSaved(const std::string& path, uint64_t version) {
  m_doc.path = path;
  if (m_doc.version == version) m_doc.dirty = false;
}

void MaskDocument::BeginGesture(const std::string& label) {
  if (m_gesture_before) return;
  m_gesture_before = m_doc.state;
  m_gesture_label = label;
}

bool MaskDocument::EndGesture() {
  if (!m_gesture_before) return false;
  m_history.Record(*m_gesture_before, m_doc.state, m_gesture_label);
  m_gesture_before.reset();
  return true;
}

}  // namespace stof::app
