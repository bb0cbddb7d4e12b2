// The memory-intensive ops of a transformer layer one by one, each a single kernel: bias,
// activation and residual add (alone or fused, MI+MI), scale, mask, row softmax, the fused
// scale + mask + softmax over attention scores, and the head layout changes around attention.
// fp16 buffers, fp32 math. CUDA-free header: device buffers are void*, streams opaque
// (cudaStream_t). Used by the layer executor through CudaBackend (the unfused ops and the
// scale_mask_softmax template) and by NativeMha (kernels/attention/native_attention.h), whose
// softmax step is LaunchScaleMaskSoftmax. Semantics: engine/cpu/reference.h (ApplyActivation,
// ScaleMaskSoftmax, SplitHeads, MergeHeads). Tests: tests/gpu/elementwise_kernels_test.cpp.
// Invariants: every launch checks its arguments on the host first and names the bad one
// ("bias_act_add: cols: expected >= 1, got 0"); a zero-sized problem (rows, n, bh or batch 0)
// launches nothing. Where a function allows out == x, any other overlap is not allowed.
// Vector path: when the row length is a multiple of 8 and the pointers are 16-byte aligned a
// thread moves 8 halves (16 bytes) at a time; otherwise one half at a time.
#pragma once

#include <cstdint>

#include "engine/core/activation.h"
#include "engine/core/status.h"

namespace stof::kernels {

// out[r, c] = act(x[r, c] + bias[c]) + residual[r, c] for x, residual, out [rows, cols]; bias
// [cols] and residual may be null (no bias, no residual). GELU is the tanh form of
// engine/core/activation.h computed with tanhf. out may equal x.
engine::Status LaunchBiasActAdd(int64_t rows, int64_t cols, const void* x, const void* bias,
                                engine::Activation act, const void* residual, void* out,
                                void* stream);

// out[i] = x[i] * scale for n elements; out may equal x; scale finite.
engine::Status LaunchScale(int64_t n, const void* x, float scale, void* out, void* stream);

// out[h, i, j] = mask(i, j) ? x[h, i, j] : -inf (fp16 0xFC00) for x, out [bh, L, L];
// mask_words: device uint64 words, L rows of ceil(L / 64) words, bit j % 64 of word j / 64 of
// row i set = (i, j) attended (engine::Mask::Words()). out may equal x. 1 <= L <= 32768.
engine::Status LaunchApplyMask(int64_t bh, int64_t seq_len, const void* x, const void* mask_words,
                               void* out, void* stream);

// Row-wise softmax of x [rows, cols] into out (max-subtracted, fp32). -inf elements get 0; a row
// with no finite element (all -inf) gives zeros, never NaN. out may equal x.
engine::Status LaunchSoftmaxRows(int64_t rows, int64_t cols, const void* x, void* out,
                                 void* stream);

// The three fused (MI+MI+MI): out = softmax over attended j of scale * x[h, i, j], 0 where
// masked, all zeros for a row with nothing attended (cpu::ScaleMaskSoftmax), for x, out
// [bh, L, L] and mask_words as LaunchApplyMask. out may equal x (NativeMha runs it in place).
// scale finite; 1 <= L <= 32768.
engine::Status LaunchScaleMaskSoftmax(int64_t bh, int64_t seq_len, const void* x, float scale,
                                      const void* mask_words, void* out, void* stream);

// dst [B, H, L, d] from head h of row (b, l) of src: src[(b L + l) src_row_stride + col_offset
// + h d + t] (cpu::SplitHeads; the fused QKV output is src with stride 3 H d and col_offset 0,
// H d, 2 H d). Requires col_offset >= 0 and col_offset + H d <= src_row_stride; no overlap.
engine::Status LaunchSplitHeads(int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim,
                                const void* src, int64_t src_row_stride, int64_t col_offset,
                                void* dst, void* stream);

// dst [B, L, H d] from src [B, H, L, d] (cpu::MergeHeads); no overlap.
engine::Status LaunchMergeHeads(int64_t batch, int64_t seq_len, int64_t heads, int64_t head_dim,
                                const void* src, void* dst, void* stream);

}  // namespace stof::kernels
