// Studio: owns the session state of stof-studio (mask, block layout, kernel selection, device)
// and draws the panels each frame. Heavy work (generation, layout, selection) happens only in
// Rebuild(), when an input changes, never per frame. main.cpp drives it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "app/studio/widgets/texture.h"
#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/device/device_spec.h"
#include "engine/layout/block_layout.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_spec.h"
#include "engine/select/kernel_select.h"

namespace stof::app {

// The embedded default: BigBird at L = 1024, BERT-base workload (batch 8, 12 heads, d = 64),
// block 64 x 64, the local GPU's spec or the H100's when there is none.
struct StudioOptions {
  engine::MaskSpec spec;  // pattern "bigbird", seq_len 1024, paper defaults
  engine::Workload workload;
  int64_t block_m = 64, block_n = 64;
  std::string device;     // "" = local GPU, else H100-SXM-80GB
};

struct StudioState {
  engine::MaskSpec spec;
  engine::Mask mask;
  engine::Workload workload;
  engine::DeviceSpec device;
  engine::BlockLayout layout;
  engine::LayoutStats stats;
  engine::KernelSelection selection;
};

class Studio {
 public:
  engine::Status Init(const StudioOptions& options);
  void Draw();                           // one frame of UI over the whole window
  nlohmann::json StateJson() const;      // what the GUI test checks
  const StudioState& State() const { return m_state; }

 private:
  engine::Status Rebuild();              // mask -> layout -> selection, then textures

  StudioOptions m_options;
  StudioState m_state;
  Texture m_mask_texture;
  Texture m_block_texture;
  bool m_show_blocks = true;
  int m_block_choice = 2;                // index into kBlockSizes (64)
  std::string m_error;
};

}  // namespace stof::app
