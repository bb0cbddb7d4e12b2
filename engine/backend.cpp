// ValidateMhaCall: the checks every Backend runs on an MhaCall before touching memory (see
// backend.h). Used by CpuBackend and kernels/' CudaBackend. Messages start with "mha call: "
// and name the field ("mha call: config.block_m: ...") so the CLI and the GUI can show them.
// It checks only what holds for every backend; dtype support is each backend's own check.
#include "engine/backend.h"

#include <initializer_list>
#include <string>

namespace stof::engine {

namespace {

bool IsOneOf(int64_t v, std::initializer_list<int64_t> allowed) {
  for (int64_t a : allowed)
    if (v == a) return true;
  return false;
}

}  // namespace

Status ValidateMhaCall(const MhaCall& call) {
  const std::string what = "mha call: ";
  STOF_RETURN_IF_ERROR(call.workload.Validate("mha call: workload"));
  if (call.mask == nullptr) return MakeError(what + "mask: must not be null");
  const int64_t L = call.workload.seq_len;
  if (call.mask->Rows() != L || call.mask->Cols() != L) {
    return MakeError(what + "mask: size " + std::to_string(call.mask->Rows()) + " x " +
                     std::to_string(call.mask->Cols()) + " does not match workload.seq_len " +
                     std::to_string(L) + " (expected " + std::to_string(L) + " x " +
                     std::to_string(L) + ")");
  }
  if (call.q == nullptr) return MakeError(what + "q: must not be null");
  if (call.k == nullptr) return MakeError(what + "k: must not be null");
  if (call.v == nullptr) return MakeError(what + "v: must not be null");
  if (call.o == nullptr) return MakeError(what + "o: must not be null");
  // The kernel parameters are checked whatever the kernel: a row-wise call ignores them, but a
  // plan carrying junk there is still a broken plan.
  const MhaConfig& c = call.config;
  if (!IsOneOf(c.block_m, {16, 32, 64, 128}))
    return MakeError(what + "config.block_m: expected one of 16, 32, 64, 128, got " +
                     std::to_string(c.block_m));
  if (!IsOneOf(c.block_n, {16, 32, 64, 128}))
    return MakeError(what + "config.block_n: expected one of 16, 32, 64, 128, got " +
                     std::to_string(c.block_n));
  if (!IsOneOf(c.num_warps, {1, 2, 4, 8}))
    return MakeError(what + "config.num_warps: expected one of 1, 2, 4, 8, got " +
                     std::to_string(c.num_warps));
  if (c.kernel != MhaKernel::kRowWise && c.kernel != MhaKernel::kBlockWise)
    return MakeError(what + "config.kernel: unknown value " +
                     std::to_string(static_cast<int>(c.kernel)));
  return Status::Ok();
}

}  // namespace stof::engine
