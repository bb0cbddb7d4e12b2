// AnalysisCache: the studio's latest mask analysis and the requests behind it. A request is
// sent to the AnalysisWorker only when its inputs (mask version, block size, workload,
// device) differ from the last one's, and only then is the mask copied; Poll picks up the
// finished result at the start of a frame and keeps the block classes the textures blend in.
// The shown analysis may be one version behind the mask while a newer one runs. Studio owns
// one; panels read it through Studio::Analysis(), AnalysisSerial() and LayoutFits().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/studio/analysis_worker.h"
#include "engine/analysis/layout_analysis.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"

namespace stof::app {

class AnalysisCache {
 public:
  // Submits `request` for this mask version unless it equals the last request
  // (`device_index` names the request's device among the studio's devices).
  void Request(const engine::Mask& mask, uint64_t version, const engine::AnalysisRequest& request,
               int device_index);
  void Poll();  // at the start of a frame
  // The last request's result is the shown one.
  bool UpToDate() const { return !m_worker.Busy() && m_shown_tag == m_request_tag; }

  // The latest finished analysis (may be for an older mask version while one is running).
  const engine::MaskAnalysis* Latest() const { return m_analysis.get(); }
  // Bumped each time Latest() is replaced (caches keyed on it never alias); 0 = none yet.
  uint64_t Serial() const { return m_serial; }
  // engine::BlockClassMatrix of Latest()->layout.
  const std::vector<uint8_t>& BlockClasses() const { return m_block_classes; }
  // The latest analysis' layout has this mask's shape.
  bool Fits(const engine::Mask& mask) const;
  const std::string& Error() const { return m_error; }  // the last request's failure, "" = none
  double Seconds() const { return m_seconds; }           // wall time of the last analysis
  const AnalysisWorker& Worker() const { return m_worker; }

 private:
  struct Key {
    uint64_t version = 0;
    int64_t block_m = 0, block_n = 0;
    engine::Workload workload;
    int device = -1;
    bool operator==(const Key&) const = default;
  };
  AnalysisWorker m_worker;
  Key m_key;
  uint64_t m_request_tag = 0;  // tag of the newest submitted analysis
  uint64_t m_shown_tag = 0;    // tag of m_analysis
  std::shared_ptr<const engine::MaskAnalysis> m_analysis;
  uint64_t m_serial = 0;
  std::vector<uint8_t> m_block_classes;
  std::string m_error;
  double m_seconds = 0;
};

}  // namespace stof::app
