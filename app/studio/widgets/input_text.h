// InputTextString: ImGui::InputText over a std::string (Dear ImGui 1.86 ships the resize
// callback only in misc/cpp, which Debian does not package). Used by the file bar, the
// document-lengths field and the export paths.
#pragma once

#include <imgui.h>

#include <string>

namespace stof::app {

bool InputTextString(const char* label, std::string* text, ImGuiInputTextFlags flags = 0);

}  // namespace stof::app
