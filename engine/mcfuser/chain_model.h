// MCFuser's analytical performance model (paper, section IV-A, equations 2-5) and its shared
// memory estimate (equation 1), on an engine::DeviceSpec. Used by candidate_space (rule 4),
// chain_search (ranking the population), the tuner and the studio (predictions without a GPU).
//
//   t      = (t_mem + t_comp) * alpha                                    (2)
//   t_mem  = sum over L_A, L_B, L_D, S_E of tile bytes * trips / W        (3)
//   t_comp = sum over C_C, C_E of tile flops * trips / P                  (4)
//   alpha  = (N_block + N_SM) / N_block                                   (5)
// with W = device.dram_bytes_per_s, P = device.fp16_tensor_flops, N_SM = device.sm_count,
// N_block = the program's thread blocks, trips from chain_program.h. Tiles move in fp16
// (2 bytes per element): A bm x bk, B bk x bn, D bn x bh, E bm x bh; C_C is 2 bm bn bk flops,
// C_E 2 bm bh bn. Ragged edges count as whole tiles (padding is work too).
//
// Shared memory (equation 1, in fp16 bytes): one tile of each of A, B, D, plus the C tiles and
// E tiles the program holds (chain_program.h: c_tiles, e_tiles):
//   smem = 2 * (bm bk + bk bn + c_tiles bm bn + bn bh + e_tiles bm bh)
// The paper sums one tile per tensor; counting the held copies is what makes rule 2's
// "many intermediate tiles" visible to rule 4 as well.
#pragma once

#include <array>
#include <cstdint>

#include "engine/core/status.h"
#include "engine/device/device_spec.h"
#include "engine/mcfuser/candidate.h"
#include "engine/mcfuser/chain_program.h"

namespace stof::engine {

inline constexpr int64_t kChainElemBytes = 2;  // fp16

struct ChainEstimate {
  ChainProgram program;
  int64_t smem_bytes = 0;                       // equation 1
  std::array<double, kNumChainStmts> stmt_bytes{};  // per statement: tile bytes * trips
  std::array<double, kNumChainStmts> stmt_flops{};  // per statement: tile flops * trips
  double bytes = 0;    // sum of stmt_bytes
  double flops = 0;    // sum of stmt_flops
  double t_mem = 0;    // seconds
  double t_comp = 0;   // seconds
  double alpha = 0;    // >= 1
  double seconds = 0;  // equation 2
};

// Errors: the candidate or the device is invalid (messages name the field).
Expected<ChainEstimate> EstimateChain(const Candidate& c, const DeviceSpec& device);
// The same for inputs known to be valid (the search's and the space's hot loops).
ChainEstimate EstimateChainUnchecked(const Candidate& c, const DeviceSpec& device);
// Equation 1 alone, from a built program.
int64_t EstimateSmemBytes(const ChainTiles& t, int64_t c_tiles, int64_t e_tiles);

}  // namespace stof::engine
