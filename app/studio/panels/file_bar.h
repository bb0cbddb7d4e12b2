// File bar (top of the window): the path field with Open / Save, the recent files, undo and
// redo. Drag-and-drop onto the window also opens a file (app_window.cpp forwards it to Studio).
#pragma once

namespace stof::app {
class Studio;
void DrawFileBar(Studio& studio);
}  // namespace stof::app
