// Equations 1-5 of MCFuser on a candidate's program (chain_model.h).
#include "engine/mcfuser/chain_model.h"

namespace stof::engine {

int64_t EstimateSmemBytes(const ChainTiles& t, int64_t c_tiles, int64_t e_tiles) {
  return kChainElemBytes * (t.bm * t.bk + t.bk * t.bn + c_tiles * t.bm * t.bn + t.bn * t.bh +
                            e_tiles * t.bm * t.bh);
}

ChainEstimate EstimateChainUnchecked(const Candidate& c, const DeviceSpec& device) {
  ChainEstimate e;
  e.program = BuildChainProgramUnchecked(c);
  const ChainTiles& t = c.tiles;
  const ChainProgram& p = e.program;
  auto at = [](ChainStmt s) { return static_cast<int>(s); };
  auto bytes = [&](ChainStmt s, int64_t elems) {
    e.stmt_bytes[at(s)] = static_cast<double>(kChainElemBytes * elems) * p.Trips(s);
  };
  bytes(ChainStmt::kLoadA, t.bm * t.bk);
  bytes(ChainStmt::kLoadB, t.bk * t.bn);
  bytes(ChainStmt::kLoadD, t.bn * t.bh);
  bytes(ChainStmt::kStoreE, t.bm * t.bh);
  e.stmt_flops[at(ChainStmt::kComputeC)] =
      2.0 * static_cast<double>(t.bm * t.bn * t.bk) * p.Trips(ChainStmt::kComputeC);
  e.stmt_flops[at(ChainStmt::kComputeE)] =
      2.0 * static_cast<double>(t.bm * t.bh * t.bn) * p.Trips(ChainStmt::kComputeE);
  for (double b : e.stmt_bytes) e.bytes += b;
  for (double f : e.stmt_flops) e.flops += f;
  e.smem_bytes = EstimateSmemBytes(t, p.c_tiles, p.e_tiles);
  e.t_mem = e.bytes / device.dram_bytes_per_s;
  e.t_comp = e.flops / device.fp16_tensor_flops;
  const double blocks = static_cast<double>(p.blocks);
  e.alpha = (blocks + device.sm_count) / blocks;
  e.seconds = (e.t_mem + e.t_comp) * e.alpha;
  return e;
}

Expected<ChainEstimate> EstimateChain(const Candidate& c, const DeviceSpec& device) {
  STOF_RETURN_IF_ERROR(ValidateCandidate(c));
  STOF_RETURN_IF_ERROR(device.Validate());
  return EstimateChainUnchecked(c, device);
}

}  // namespace stof::engine
