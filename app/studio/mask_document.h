// MaskDocument: the studio's mask document (bits + generator spec, file, unsaved flag,
// version) with its undo history, changed only through commands: EditCommand (a brush, line,
// rectangle or band from the canvas) applies the cells and marks the document edited in one
// step; Replace, Step (undo / redo), SetPath and MarkSaved cover the whole-mask changes.
// Edits between BeginGesture and EndGesture are one undo step. Studio owns one and keeps the
// textures and the analysis in step with it; panels read the Document and send commands
// through Studio.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/core/status.h"
#include "engine/mask/mask_edit.h"
#include "engine/mask/mask_history.h"
#include "engine/mask/mask_spec.h"

namespace stof::app {

struct Document {
  engine::MaskState state;  // bits + generator spec (reset by a hand edit)
  std::string path;         // the file last opened or saved ("" = none)
  bool dirty = false;       // changed since opened / saved
  uint64_t version = 1;     // bumped on every change of the bits or the spec
};

// One hand edit of the mask's cells, as engine/mask/mask_edit.h does it.
struct EditCommand {
  enum class Kind { kBrush, kLine, kRect, kBand };
  Kind kind = Kind::kBrush;
  int64_t r0 = 0, c0 = 0;  // brush / band: the cell; line / rectangle: the first end or corner
  int64_t r1 = 0, c1 = 0;  // line / rectangle: the other end or corner
  int64_t size = 1;        // brush and line: the brush side; band: the width
  engine::EditOptions options;

  static EditCommand Brush(int64_t r, int64_t c, int64_t size, const engine::EditOptions& o);
  static EditCommand Line(int64_t r0, int64_t c0, int64_t r1, int64_t c1, int64_t size,
                          const engine::EditOptions& o);
  static EditCommand Rect(int64_t r0, int64_t c0, int64_t r1, int64_t c1, const engine::EditOptions& o);
  static EditCommand Band(int64_t r, int64_t c, int64_t width, const engine::EditOptions& o);
};

class MaskDocument {
 public:
  const Document& Get() const { return m_doc; }
  const engine::MaskHistory& History() const { return m_history; }

  // Applies the edit; when a cell changed, the generator spec is dropped, the version bumped
  // and the document marked unsaved. Returns the changed cells (empty: none), or the edit's
  // error (nothing changed).
  engine::Expected<engine::CellRect> Apply(const EditCommand& edit);
  // New bits and spec (a preset, a file, a plan's mask): the version is bumped; `dirty` marks
  // the document unsaved (false keeps the flag as it is).
  void Replace(engine::MaskState state, bool dirty);
  // Undo (redo = false) or redo one step: its label, or why there is none.
  engine::Expected<std::string> Step(bool redo);
  void SetPath(const std::string& path) { m_doc.path = path; }
  // The file at `path` holds the document as it was at `version`: "unsaved" clears unless
  // something changed since.
  void MarkSaved(const std::string& path, uint64_t version);

  // One undo step over several commands (a stroke, a slider drag): Begin captures the state
  // (a gesture already open is kept), End records the step; true when one was recorded.
  void BeginGesture(const std::string& label);
  bool EndGesture();
  bool InGesture() const { return m_gesture_before.has_value(); }

 private:
  Document m_doc;
  engine::MaskHistory m_history;
  std::optional<engine::MaskState> m_gesture_before;
  std::string m_gesture_label;
};

}  // namespace stof::app
