// SaveJob (save_job.h): one thread per save, joined when its result is polled.
#include "app/studio/save_job.h"

#include <exception>

#include "engine/mask/mask_io.h"

namespace stof::app {

SaveJob::~SaveJob() {
  if (m_thread.joinable()) m_thread.join();
}

engine::Status SaveJob::Start(std::shared_ptr<const engine::Mask> mask, std::optional<engine::MaskSpec> spec,
                              const std::string& path, uint64_t version) {
  if (m_thread.joinable()) {
    if (!m_done.load()) return engine::MakeError("save " + path + ": still writing " + m_result.path);
    m_thread.join();  // finished but not polled: its result is superseded
  }
  m_done = false;
  m_result = SaveResult{path, version, engine::Status::Ok(), 0};
  m_start = std::chrono::steady_clock::now();
  m_thread = std::thread([this, mask = std::move(mask), spec = std::move(spec)] {
    try {  // nothing may escape a thread; SaveMask reports errors as values, memory aside
      m_result.status = engine::SaveMask(m_result.path, *mask, spec ? &*spec : nullptr);
    } catch (const std::exception& e) {
      m_result.status = engine::MakeError(m_result.path + ": cannot save: " + e.what());
    }
    m_result.seconds = Seconds();
    m_done = true;
  });
  return engine::Status::Ok();
}

std::optional<SaveResult> SaveJob::Poll() {
  if (!m_thread.joinable() || !m_done.load()) return std::nullopt;
  m_thread.join();
  return m_result;
}

double SaveJob::Seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - m_start).count();
}

}  // namespace stof::app
