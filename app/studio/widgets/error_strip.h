// ErrorStrip: an error shown in full in a strip above the status bar (an error used to be one
// line of the status bar, clipped at the window's edge: issue 16). The strip is wrapped to the
// window's width and as tall as the text up to kErrorStripLines lines, then it scrolls; Copy
// puts the text on the clipboard and Dismiss hides it until another error replaces it (the
// status bar then offers ShowAgain). Studio owns one and passes the current error each frame;
// the state dump reports the strip as last laid out (StateJson).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace stof::app {

class ErrorStrip {
 public:
  // `error` unless the user dismissed this very text; "" = nothing to show.
  const std::string& Shown(const std::string& error) const;
  // Lays the strip out for `error` at this window width and returns the height to keep above
  // the status bar (0 = no strip).
  float Layout(const std::string& error, float width);
  void Draw(const std::string& error, float height);  // after Layout; nothing when height <= 0
  void ShowAgain() { m_dismissed.clear(); }
  // shown, text, lines, text_height, strip_height, scrolls: the strip as last laid out.
  nlohmann::json StateJson(const std::string& error) const;

 private:
  std::string m_dismissed;  // the error the user closed; a new one shows again
  struct View {
    bool shown = false;
    int lines = 0;          // wrapped lines of the message
    float text_height = 0, strip_height = 0;
    bool scrolls = false;   // over kErrorStripLines: the strip scrolls
  } m_view;
};

}  // namespace stof::app
