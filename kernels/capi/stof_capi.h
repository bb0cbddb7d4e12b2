/* STOF sparse MHA as a C API, for Python (ctypes) and other foreign callers: libstof_capi.so,
 * built only with CUDA (kernels/CMakeLists.txt). Used by tests/compare/mha_compare.py and the
 * python/ package (python/stof/_capi.py).
 * No CUDA types: device buffers and streams are void* (a cudaStream_t; NULL = the legacy
 * default stream). Tensors are fp16 [B, H, L, d], contiguous, 16-byte aligned, on one GPU;
 * d is 64 or 128. The mask is L*L bytes on the host, row-major, nonzero = attend, shared by
 * every (batch, head); rows with nothing attended give zeros.
 *
 * Kernel choice: 0 = auto (STOF Eq. 1 picks row-wise or block-wise; Eq. 2 picks BLOCK_M,
 * BLOCK_N and num_warps, falling back to the best-scoring configuration the block-wise kernel
 * supports when Eq. 2's pick is not supported), 1 = row-wise, 2 = block-wise, 3 = native (the
 * unfused baseline, what PyTorch eager does: cuBLAS Q K^T, one scale + mask + softmax kernel,
 * cuBLAS P V; never chosen by auto; its plan holds a B*H*L*L fp16 workspace, and since its
 * launches share it, one native plan must not run on two streams at once), 4 = sd (softmax
 * decomposition: cuBLAS Q K^T, local softmax, inter-sub-vector reduction and global scaling
 * kernels, cuBLAS P V; the same workspace as native plus per-tile statistics), 5 = sdf
 * (decomposition + fusion: local softmax in the Q K^T GEMM's epilogue, global scaling in the
 * P V GEMM's prologue; workspace for the mask's valid tiles); sd and sdf are never chosen by
 * auto and, like native, one such plan must not run on two streams at once. block_m,
 * block_n, num_warps: 0 = chosen by Eq. 2; any given value restricts the choice (all three
 * given: exactly that configuration, refused when unsupported; ignored by row-wise and native).
 * For sd and sdf, block_m x block_n is BM x T (query rows per tile x sub-vector length, each
 * 64 or 128; both 0 = 64 x 64) and num_warps is ignored.
 *
 * Errors: every function returning int returns STOF_OK (0) on success, else a nonzero code,
 * and writes a one-line, NUL-terminated message into err[0..err_len) (truncated to fit; err
 * may be NULL). Launches are asynchronous: a fault inside a kernel surfaces at the caller's
 * next synchronisation. No function throws, exits or aborts. Thread-safe; a plan may be run
 * from several threads at once (a native, sd or sdf plan on one stream at a time: see above).
 * Devices: a call works on its plan's device (stof_mha: q's) and leaves the calling thread's
 * current CUDA device as it found it.
 */
#ifndef STOF_CAPI_H_
#define STOF_CAPI_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define STOF_CAPI_EXPORT __attribute__((visibility("default")))
#else
#define STOF_CAPI_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define STOF_CAPI_VERSION 8 /* 2: STOF_KERNEL_NATIVE (SD and SDF, kernels 4 and 5, added values
                               only: no function or layout changed); 3: stof_run_views (strided
                               views, another batch / head count, a score scale; the python/
                               package uses it), added only: no function or layout changed;
                               4: stof_prepare_dtype and STOF_DTYPE_* (bf16 on the Hopper
                               kernel), added only; 5: stof_bind_views, stof_run_bound and
                               stof_bound_release (a call bound once, run with the addresses
                               only), added only; 6: stof_prepare_shape (grouped key/value
                               heads, query length != key length), stof_bind_views_keys (fewer
                               keys than prepared) and stof_run_views taking H query heads of such
                               a plan, added only; 7: stof_run_bound_ranges (per batch row key
                               ranges), added only; 8: stof_prepare_patterns (masks per batch
                               row / head) and stof_run_bound_keys (per batch row kept keys),
                               added only */

enum {
  STOF_OK = 0,
  STOF_ERR_INVALID = 1, /* bad argument, unsupported configuration */
  STOF_ERR_CUDA = 2,    /* no GPU, CUDA call failed, out of memory */
  STOF_ERR_INTERNAL = 3 /* an unexpected exception inside the library */
};

enum {
  STOF_KERNEL_AUTO = 0,
  STOF_KERNEL_ROW_WISE = 1,
  STOF_KERNEL_BLOCK_WISE = 2,
  STOF_KERNEL_NATIVE = 3,
  STOF_KERNEL_SD = 4,
  STOF_KERNEL_SDF = 5
};

/* Element types of q, k, v and o (stof_prepare_dtype). bf16 runs on the block-wise Hopper
 * kernel only (sm_90): other requests and other GPUs are refused with STOF_ERR_INVALID. */
enum { STOF_DTYPE_F16 = 0, STOF_DTYPE_BF16 = 1 };

/* A mask prepared for one workload: the kernel choice and its device layout (built and
 * uploaded once). Opaque. */
typedef struct stof_plan stof_plan;

STOF_CAPI_EXPORT int stof_capi_version(void); /* STOF_CAPI_VERSION */

/* One call: chooses, builds the layout (cached inside the library by mask contents, workload
 * and request, at most 16 plans) and launches on `stream`. The device is the one holding q.
 * Converting and hashing the mask costs O(L*L) host time per call: time stof_run instead. */
STOF_CAPI_EXPORT int stof_mha(const void* q, const void* k, const void* v, void* o, int64_t B,
                              int64_t H, int64_t L, int64_t d, const uint8_t* mask_host,
                              int kernel, int64_t block_m, int64_t block_n, int64_t num_warps,
                              void* stream, char* err, size_t err_len);

/* Chooses and uploads the layout for `mask_host` and the workload [B, H, L, d] on `device`
 * (-1 = the current device of this library's CUDA runtime, 0 unless changed). *plan receives a handle to release with
 * stof_release. */
STOF_CAPI_EXPORT int stof_prepare(const uint8_t* mask_host, int64_t B, int64_t H, int64_t L,
                                  int64_t d, int kernel, int64_t block_m, int64_t block_n,
                                  int64_t num_warps, int device, stof_plan** plan, char* err,
                                  size_t err_len);

/* stof_prepare for operands of element type `dtype` (STOF_DTYPE_*; since version 4):
 * stof_prepare is this with STOF_DTYPE_F16. */
STOF_CAPI_EXPORT int stof_prepare_dtype(const uint8_t* mask_host, int64_t B, int64_t H, int64_t L,
                                        int64_t d, int dtype, int kernel, int64_t block_m,
                                        int64_t block_n, int64_t num_warps, int device,
                                        stof_plan** plan, char* err, size_t err_len);

/* stof_prepare_dtype for the shapes of today's models (since version 6): q and o are [B, H,
 * Lq, d], k and v [B, Hkv, Lk, d] with H a multiple of Hkv (grouped-query attention: query
 * head h reads key/value head h / (H / Hkv), in place, never copied; Hkv = 1 is MQA), and the
 * mask is Lq*Lk bytes (row i = query i, column j = key j). A KV-cache step passes its new
 * query rows as Lq and the whole cache as Lk, with a mask whose rows say what each new row
 * attends (causal aligned to the bottom right: row i attends keys j <= i + Lk - Lq).
 * H = Hkv and Lq = Lk is stof_prepare_dtype; any other shape runs on the block-wise Hopper
 * kernel only (sm_90), which packs the query heads of a key/value head into one tile when the
 * queries are short (a decode step). stof_run_views then takes H query heads (a multiple of
 * H / Hkv); its kv_strides describe k and v. */
STOF_CAPI_EXPORT int stof_prepare_shape(const uint8_t* mask_host, int64_t B, int64_t H,
                                        int64_t Hkv, int64_t Lq, int64_t Lk, int64_t d, int dtype,
                                        int kernel, int64_t block_m, int64_t block_n,
                                        int64_t num_warps, int device, stof_plan** plan,
                                        char* err, size_t err_len);

/* stof_prepare_shape with a mask per batch row and query head (since version 8): P distinct
 * masks of Lq*Lk bytes one after another in `masks_host`, and `pattern_of`, host int32 [B][H]:
 * the index (0..P-1) of the mask of each (batch row, query head). Packed documents with other
 * boundaries per row, a padded batch, heads with different sparse patterns: one launch, each
 * pattern's layout stored once however many (batch, head) pairs use it (equal masks are
 * merged). The block-wise Hopper kernel only (sm_90; kernel 0 or 2), chosen on the union of the
 * patterns; the query heads of a key/value head share a tile (packed GQA) only where they share
 * a mask. Launches take the prepared B and H only; the plan never splits a tile's keys over
 * CTAs. stof_plan_info's nnz sums every (batch row, head). */
STOF_CAPI_EXPORT int stof_prepare_patterns(const uint8_t* masks_host, int64_t P,
                                           const int32_t* pattern_of, int64_t B, int64_t H,
                                           int64_t Hkv, int64_t Lq, int64_t Lk, int64_t d,
                                           int dtype, int kernel, int64_t block_m,
                                           int64_t block_n, int64_t num_warps, int device,
                                           stof_plan** plan, char* err, size_t err_len);

/* Launches the prepared plan on `stream` for the prepared B, H, L, d: no mask work. */
STOF_CAPI_EXPORT int stof_run(const stof_plan* plan, const void* q, const void* k, const void* v,
                              void* o, void* stream, char* err, size_t err_len);

/* Launches the prepared plan on `stream` for [B, H, L, d] operands given as strided views
 * (since version 3; a stof_prepare_shape plan: q and o [B, H, Lq, d], k and v [B, H / group,
 * Lk, d]). B and H may differ from the prepared ones (native, sd, sdf: B * H at most
 * the prepared B * H); L and d may not. Each stride array holds 3 element strides {batch, head,
 * row} (a row's d values are contiguous); NULL = packed [B, H, L, d]; k and v share kv_strides.
 * A [B, L, H, d] tensor is {L*H*d, d, H*d}. Strides must be multiples of 8 elements (16-byte
 * rows) with row >= d. `scale` multiplies the scores (0 = 1/sqrt(d); T5 uses 1). Strided views
 * and a scale other than 1/sqrt(d) are taken by the block-wise kernel only: a plan that runs
 * another kernel refuses them with STOF_ERR_INVALID and a message naming the kernel. */
STOF_CAPI_EXPORT int stof_run_views(const stof_plan* plan, const void* q, const void* k,
                                    const void* v, void* o, int64_t B, int64_t H,
                                    const int64_t* q_strides, const int64_t* kv_strides,
                                    const int64_t* o_strides, float scale, void* stream,
                                    char* err, size_t err_len);

/* stof_run_views split in two (since version 5), for callers that repeat one call shape with
 * new addresses (the python/ package's eager calls): stof_bind_views checks B, H and the
 * workload once and keeps them with the strides and the scale in *bound; stof_run_bound then
 * launches with the four addresses and the stream only, as stof_run_views would with the bound
 * arguments (strides and kernel are checked at launch, as there). A bound call refers to its
 * plan: release it with stof_bound_release before the plan (NULL is ignored). */
typedef struct stof_bound stof_bound;
STOF_CAPI_EXPORT int stof_bind_views(const stof_plan* plan, int64_t B, int64_t H,
                                     const int64_t* q_strides, const int64_t* kv_strides,
                                     const int64_t* o_strides, float scale, stof_bound** bound,
                                     char* err, size_t err_len);
/* stof_bind_views for a launch with Lk keys, fewer than the plan's (since version 6): a KV
 * cache prepared once for its capacity (a stof_prepare_shape plan with Lq below its keys),
 * launched as it fills; the mask's first Lk columns, the keys past them not attended. Lk equal
 * to the plan's keys is stof_bind_views. */
STOF_CAPI_EXPORT int stof_bind_views_keys(const stof_plan* plan, int64_t B, int64_t H, int64_t Lk,
                                          const int64_t* q_strides, const int64_t* kv_strides,
                                          const int64_t* o_strides, float scale,
                                          stof_bound** bound, char* err, size_t err_len);
STOF_CAPI_EXPORT int stof_run_bound(const stof_bound* bound, const void* q, const void* k,
                                    const void* v, void* o, void* stream, char* err,
                                    size_t err_len);
STOF_CAPI_EXPORT void stof_bound_release(stof_bound* bound);

/* stof_run_bound with per batch row key ranges (since version 7): `key_ranges` is a device
 * array of int32 [B][2], 8-byte aligned, or NULL (then this is stof_run_bound): batch row b
 * attends only keys first_b <= j < end_b of what the mask allows, so a padded batch (each row
 * with its own padding, one mask for the rest) runs in one launch; rows left with nothing to
 * attend give zeros. The block-wise Hopper kernel only (STOF_ERR_INVALID elsewhere). */
STOF_CAPI_EXPORT int stof_run_bound_ranges(const stof_bound* bound, const void* q, const void* k,
                                           const void* v, void* o, const void* key_ranges,
                                           void* stream, char* err, size_t err_len);

/* stof_run_bound_ranges with per batch row kept keys too (since version 8): `key_bits` is a
 * device array of uint64 [B][key_words], 8-byte aligned, or NULL: bit j of word w of row b
 * says whether batch row b keeps key 64 w + j (padding anywhere in a row, holes included, in
 * one launch, with no mask work on the host); key_words covers Lk rounded up to 128 (at least
 * 2 * ceil(Lk / 128)). The dropped keys are masked like keys past Lk; rows left with nothing
 * give zeros. `key_ranges` as in stof_run_bound_ranges (NULL: none). The block-wise Hopper
 * kernel only (STOF_ERR_INVALID elsewhere). */
STOF_CAPI_EXPORT int stof_run_bound_keys(const stof_bound* bound, const void* q, const void* k,
                                         const void* v, void* o, const void* key_ranges,
                                         const uint64_t* key_bits, int64_t key_words,
                                         void* stream, char* err, size_t err_len);

/* What the plan runs: *kernel = STOF_KERNEL_ROW_WISE, STOF_KERNEL_BLOCK_WISE,
 * STOF_KERNEL_NATIVE, STOF_KERNEL_SD or STOF_KERNEL_SDF; block_m, block_n, num_warps (0 for
 * row-wise and native; sd and sdf: BM, T and 0); *fell_back = 1 when Eq. 2's pick was
 * unsupported and a fallback is used. `text` receives one line: kernel, parameters, where
 * they came from, and the note on a fallback. Any output pointer may be NULL. */
STOF_CAPI_EXPORT int stof_choice(const stof_plan* plan, int* kernel, int64_t* block_m,
                                 int64_t* block_n, int64_t* num_warps, int* fell_back,
                                 char* text, size_t text_len);

/* Facts about the plan: attended elements, valid blocks (block-wise; 0 for row-wise, native
 * and sd; sdf: valid BM x T tiles per head), bytes of the device layout (native: the mask copy
 * and the S workspace; sd, sdf: the mask copy, tile list and workspace), and the host
 * milliseconds of the selection (Eq. 1 / Eq. 2), the layout build and the upload. Any output
 * pointer may be NULL. */
STOF_CAPI_EXPORT int stof_plan_info(const stof_plan* plan, int64_t* nnz, int64_t* valid_blocks,
                                    int64_t* layout_bytes, double* select_ms, double* build_ms,
                                    double* upload_ms);

/* Frees the plan and its device layout (on the plan's device). NULL is ignored. */
STOF_CAPI_EXPORT void stof_release(stof_plan* plan);

#ifdef __cplusplus
}
#endif

#endif /* STOF_CAPI_H_ */
