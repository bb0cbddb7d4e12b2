// Studio's views (studio.h): for each panel, the state it draws filled from the session's
// models, the panel drawn, and the actions it returns applied through Studio's commands, in the
// order the panel reported them. The panels (panels/) never see Studio; this file is the one
// place that knows both sides. The window shell that calls these is studio_frame.cpp.
#include "app/studio/panels/file_bar.h"
#include "app/studio/studio.h"

namespace stof::app {

void Studio::ShowFileBar() {
  const FileBarView view{m_recent, History().UndoCount() > 0, History().RedoCount() > 0, Doc().path, Doc().dirty};
  const FileBarActions a = DrawFileBar(view, m_path_buffer);
  if (a.open) OpenFile(*a.open);
  if (a.save) SaveFile(*a.save);
  if (a.undo) Undo();
  if (a.redo) Redo();
}

}  // namespace stof::app
