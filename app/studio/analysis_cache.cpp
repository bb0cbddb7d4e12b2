// AnalysisCache (analysis_cache.h).
#include "app/studio/analysis_cache.h"

#include <optional>

#include "engine/layout/layout_export.h"

namespace stof::app {

void AnalysisCache::Request(const engine::Mask& mask, uint64_t version, const engine::AnalysisRequest& request,
                            int device_index) {
  const Key key{version, request.block_m, request.block_n, request.workload, device_index};
  if (key == m_key) return;
  m_key = key;
  m_worker.Submit(std::make_shared<const engine::Mask>(mask), request, ++m_request_tag);
}

void AnalysisCache::Poll() {
  std::optional<AnalysisResult> r = m_worker.Poll();
  if (!r) return;
  m_shown_tag = r->tag;
  m_seconds = r->seconds;
  if (r->analysis) {
    m_analysis = r->analysis;
    ++m_serial;
    m_block_classes = engine::BlockClassMatrix(m_analysis->layout);
    m_error.clear();
  } else {
    m_error = r->error;
  }
}

bool AnalysisCache::Fits(const engine::Mask& mask) const {
  return m_analysis && m_analysis->layout.Rows() == mask.Rows() && m_analysis->layout.Cols() == mask.Cols();
}

}  // namespace stof::app
