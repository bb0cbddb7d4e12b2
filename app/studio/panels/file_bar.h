// File bar (top of the window): the path field with Open / Save, the recent files, undo and
// redo, and the document's file with its unsaved mark. Studio-independent like
// profile_panel.h: it draws a FileBarView (filled by the studio each frame) and the path
// field it edits in place, and returns what the user asked for; the studio opens, saves and
// steps the history. Drag-and-drop onto the window also opens a file (app_window.cpp forwards
// it to Studio).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace stof::app {

struct FileBarView {
  std::vector<std::string> recent;  // the recent files, newest first
  bool can_undo = false, can_redo = false;
  std::string doc_path;             // the document's file; "" = generated
  bool dirty = false;               // changed since opened or saved
};

struct FileBarActions {
  std::optional<std::string> open;  // Open, Enter, or a recent file (also put in the path field)
  std::optional<std::string> save;  // Save: the path field's file
  bool undo = false, redo = false;
};

// `path`: the path field's text (the studio keeps it: the quit dialog saves to it, a dropped
// or opened file is written into it).
FileBarActions DrawFileBar(const FileBarView& view, std::string& path);

}  // namespace stof::app
