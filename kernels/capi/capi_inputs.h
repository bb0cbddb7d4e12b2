// The C API's argument checks and error reporting, shared by its entry points (stof_capi.cpp):
// the kernel request, the call's shape as a workload, the mask from host bytes, and the code
// and message of a failure. Internal to libstof_capi.so.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

#include "engine/core/status.h"
#include "engine/core/workload.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_set.h"
#include "kernels/attention/prepared_mha.h"
#include "kernels/capi/stof_capi.h"

namespace stof::capi {

// A failure: the C code and the message.
struct Failure {
  int code = STOF_ERR_INVALID;
  std::string message;
};

void WriteText(char* buf, size_t len, const std::string& text);
// "stof_capi: <message>" into the caller's buffer; returns the code.
int Report(const Failure& f, char* err, size_t err_len);

// Runs `body` (returning an int code), turning any escaping exception into STOF_ERR_INTERNAL.
template <class Body>
int Guard(char* err, size_t err_len, Body&& body) {
  try {
    return body();
  } catch (const std::exception& e) {
    return Report({STOF_ERR_INTERNAL, std::string("internal error: ") + e.what()}, err, err_len);
  } catch (...) {
    return Report({STOF_ERR_INTERNAL, "internal error: unknown exception"}, err, err_len);
  }
}

// STOF_ERR_CUDA for a failure that came from CUDA or a missing GPU, else STOF_ERR_INVALID.
int CodeOf(const std::string& message);

engine::Expected<kernels::MhaRequest> MakeRequest(int kernel, int64_t block_m, int64_t block_n,
                                                  int64_t num_warps);
// rows*cols bytes (nonzero = attend) -> bit-packed Mask, 64 columns per word.
engine::Expected<engine::Mask> MaskFromBytes(const uint8_t* bytes, int64_t rows, int64_t cols);

// The call's shape: B, H query heads over Hkv key/value heads, Lq query rows over Lk keys, d.
struct CallShape {
  int64_t B = 0, H = 0, Hkv = 0, Lq = 0, Lk = 0, d = 0;
};

engine::Expected<engine::Workload> MakeWorkload(const CallShape& shape, int dtype);

// The checked inputs of stof_mha and stof_prepare (request, workload, mask), in that order, so
// both entry points reject bad arguments with the same messages.
struct CallInputs {
  kernels::MhaRequest request;
  engine::Workload workload;
  engine::Mask mask;
};

engine::Expected<CallInputs> ParseCallInputs(const uint8_t* mask_host, const CallShape& shape,
                                             int kernel, int64_t block_m, int64_t block_n,
                                             int64_t num_warps, int dtype = STOF_DTYPE_F16);

// stof_prepare_patterns' inputs: P masks of Lq x Lk bytes one after another and the pattern
// of each (batch, query head), checked and merged (engine::MaskSet).
struct PatternInputs {
  kernels::MhaRequest request;
  engine::Workload workload;
  engine::MaskSet set;
};

engine::Expected<PatternInputs> ParsePatternInputs(const uint8_t* masks_host, int64_t patterns,
                                                   const int32_t* pattern_of,
                                                   const CallShape& shape, int kernel,
                                                   int64_t block_m, int64_t block_n,
                                                   int64_t num_warps, int dtype);

}  // namespace stof::capi
