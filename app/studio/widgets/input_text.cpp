// InputTextString (input_text.h): grows the string when ImGui asks for more room.
#include "app/studio/widgets/input_text.h"

namespace stof::app {

namespace {
int Resize(ImGuiInputTextCallbackData* data) {
  if (data->EventFlag == ImGuiInputTextFlags_CallbackResize) {
    auto* s = static_cast<std::string*>(data->UserData);
    s->resize(static_cast<size_t>(data->BufTextLen));
    data->Buf = s->data();
  }
  return 0;
}
}  // namespace

bool InputTextString(const char* label, std::string* text, ImGuiInputTextFlags flags) {
  return ImGui::InputText(label, text->data(), text->capacity() + 1,
                          flags | ImGuiInputTextFlags_CallbackResize, Resize, text);
}

}  // namespace stof::app
