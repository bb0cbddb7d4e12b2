// SaveJob: writes one mask file (engine::SaveMask) on its own thread, so saving a large mask
// never blocks the window (PNG at L = 16384 spends seconds in stb's deflate). Studio owns one,
// starts it from SaveFile and polls it at the start of each frame; the status line shows the
// file and the seconds spent while it runs. Invariants: at most one save runs at a time; the
// job writes an immutable snapshot of the mask (later edits do not reach the file), and the
// result carries the document version it was taken at, so Studio clears "unsaved" only when
// nothing changed meanwhile. The destructor waits for a running save (a half-written file is
// worse than a late exit).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "engine/core/status.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"

namespace stof::app {

struct SaveResult {
  std::string path;
  uint64_t version = 0;  // the document version that was written
  engine::Status status;
  double seconds = 0;
};

class SaveJob {
 public:
  SaveJob() = default;
  ~SaveJob();
  SaveJob(const SaveJob&) = delete;
  SaveJob& operator=(const SaveJob&) = delete;

  // Starts writing `mask` (and `spec`, for JSON files) to `path`; an error when a save runs.
  engine::Status Start(std::shared_ptr<const engine::Mask> mask, std::optional<engine::MaskSpec> spec,
                       const std::string& path, uint64_t version);
  // A save runs or its result waits for Poll() (so "busy" ends when Studio has seen it).
  bool Busy() const { return m_thread.joinable(); }
  // The finished save's result, once (then the job is idle again).
  std::optional<SaveResult> Poll();
  const std::string& Path() const { return m_result.path; }  // of the running or last save
  double Seconds() const;                                    // since the running save began

 private:
  std::thread m_thread;
  std::atomic<bool> m_done{false};
  SaveResult m_result;  // written by the thread before m_done, read by the GUI after
  std::chrono::steady_clock::time_point m_start;
};

}  // namespace stof::app
