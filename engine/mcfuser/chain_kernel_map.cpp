// RunnableByChainKernel: program equality with mhnk (chain_kernel_map.h).
#include "engine/mcfuser/chain_kernel_map.h"

#include "engine/mcfuser/chain_program.h"

namespace stof::engine {

TilingExpr ChainKernelExpr() {
  return TilingExpr{{ChainLoop::kM, ChainLoop::kH, ChainLoop::kN, ChainLoop::kK}, false};
}

bool RunnableByChainKernel(const Candidate& c) {
  if (!ValidateCandidate(c)) return false;
  const ChainExtents x = ExtentsOf(c.shape, c.tiles);
  return ScheduleChain(c.expr, x).text == ScheduleChain(ChainKernelExpr(), x).text;
}

}  // namespace stof::engine
