/* The engine's readers as a C API, for Python (ctypes) and other foreign callers:
 * libstof_engine_capi.so, built in every build (CUDA or not) from engine/ alone
 * (engine/CMakeLists.txt). The python/ package reads mask files, mask specs and plans only
 * through it (python/stof/_engine.py), so Python and the `stof` CLI run the same fuzzed loaders
 * (docs/robustness.md, "Reading files") and agree by construction.
 *
 * Masks are square or not (a mask file must be square: the loader refuses others), at most
 * 32768 x 32768; bytes are row-major, one per element, 1 = attend.
 *
 * Errors: every function returning int returns STOF_ENGINE_OK (0) on success, else a nonzero
 * code, and writes a one-line, NUL-terminated message into err[0..err_len) (truncated to fit;
 * err may be NULL). Messages start with the file or input name ("p.json: mha.num_warps: ...").
 * No function throws, exits or aborts; an out-of-memory is STOF_ENGINE_ERR_INTERNAL. Handles are
 * immutable after creation: any thread may read one; free each once.
 */
#ifndef STOF_ENGINE_CAPI_H_
#define STOF_ENGINE_CAPI_H_

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
#define STOF_ENGINE_EXPORT __attribute__((visibility("default")))
#else
#define STOF_ENGINE_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* 2: stof_engine_mask_save; 3: stof_engine_mask_from_slices and _from_column_intervals; 4:
 * stof_engine_mask_spec_last_rows. Each version only adds. */
#define STOF_ENGINE_CAPI_VERSION 4

enum {
  STOF_ENGINE_OK = 0,
  STOF_ENGINE_ERR_INVALID = 1,  /* bad input: the file, its contents, an argument */
  STOF_ENGINE_ERR_INTERNAL = 3  /* an exception inside the library (out of memory) */
};

typedef struct stof_engine_mask stof_engine_mask;
typedef struct stof_engine_plan stof_engine_plan;

STOF_ENGINE_EXPORT int stof_engine_capi_version(void); /* STOF_ENGINE_CAPI_VERSION */

/* A .png, .npy or .json mask file, read as `stof --mask FILE` reads it (engine LoadMask). */
STOF_ENGINE_EXPORT int stof_engine_mask_load(const char* path, stof_engine_mask** out, char* err,
                                             size_t err_len);
/* A generator spec: the JSON text of a spec object ({"pattern": "bigbird", "seq_len": 1024,
 * ...}, docs/masks.md), generated as a JSON mask file's spec is. `name` prefixes messages. */
STOF_ENGINE_EXPORT int stof_engine_mask_from_spec(const char* spec_json, size_t spec_len,
                                                  const char* name, stof_engine_mask** out,
                                                  char* err, size_t err_len);
/* The last `rows` rows of a generator spec's mask over all its seq_len keys: a KV cache's
 * newest query rows (a decode step: 1) of a mask longer than a square one holds (seq_len up to
 * 262144 with rows x seq_len <= 32768 x 32768), built from the spec's row runs, never its
 * L x L bits; bit for bit the last rows of stof_engine_mask_from_spec's mask where that one
 * exists. The handle holds no spec (since version 4). */
STOF_ENGINE_EXPORT int stof_engine_mask_spec_last_rows(const char* spec_json, size_t spec_len,
                                                       const char* name, int64_t rows,
                                                       stof_engine_mask** out, char* err,
                                                       size_t err_len);
/* rows x cols bytes, row-major, nonzero = attend. */
STOF_ENGINE_EXPORT int stof_engine_mask_from_bytes(const uint8_t* bytes, int64_t rows,
                                                   int64_t cols, stof_engine_mask** out,
                                                   char* err, size_t err_len);
/* MagiAttention's slice form (docs/masks.md, "Slices and column intervals"): `count` slices of
 * five int64 each, (q_begin, q_end, k_begin, k_end, kind) with kind 0 full, 1 causal (aligned
 * to the bottom right), 2 inverse causal, 3 bi-causal; the mask is their union (since version
 * 3). Messages name the slice and field. */
STOF_ENGINE_EXPORT int stof_engine_mask_from_slices(int64_t rows, int64_t cols,
                                                    const int64_t* slices, size_t count,
                                                    stof_engine_mask** out, char* err,
                                                    size_t err_len);
/* FlashMask's column form: key column j is not attended by rows [lower_begin[j], lower_end[j])
 * nor [upper_begin[j], upper_end[j]); each array holds `cols` values in 0..rows (since
 * version 3). */
STOF_ENGINE_EXPORT int stof_engine_mask_from_column_intervals(
    int64_t rows, int64_t cols, const int64_t* lower_begin, const int64_t* lower_end,
    const int64_t* upper_begin, const int64_t* upper_end, stof_engine_mask** out, char* err,
    size_t err_len);
/* 0 for NULL. */
STOF_ENGINE_EXPORT int64_t stof_engine_mask_rows(const stof_engine_mask* mask);
STOF_ENGINE_EXPORT int64_t stof_engine_mask_cols(const stof_engine_mask* mask);
/* The rows * cols bytes (0 / 1) into out[0..out_len); out_len must be rows * cols. */
STOF_ENGINE_EXPORT int stof_engine_mask_copy_bytes(const stof_engine_mask* mask, uint8_t* out,
                                                   size_t out_len, char* err, size_t err_len);
/* Mask::HashHex(): 16 hex digits and a NUL into out[0..17) (what plans record in mask.hash). */
STOF_ENGINE_EXPORT int stof_engine_mask_hash(const stof_engine_mask* mask, char* out,
                                             size_t out_len, char* err, size_t err_len);
/* The spec of a mask made from one (a spec file, a spec, a plan's spec mask) as compact JSON:
 * writes at most out_len bytes with a NUL and returns the length the whole text needs with its
 * NUL (call with out_len 0 to size the buffer); 0 when the mask has no spec. */
STOF_ENGINE_EXPORT size_t stof_engine_mask_spec_json(const stof_engine_mask* mask, char* out,
                                                     size_t out_len);
STOF_ENGINE_EXPORT void stof_engine_mask_free(stof_engine_mask* mask); /* NULL is ignored */
/* Writes the mask to `path` as `stof mask --out FILE` does (engine SaveMask; the format by the
 * extension: .png, .npy, or .json, which keeps the spec of a mask made from one), atomically:
 * the old file stays on any failure (since version 2). */
STOF_ENGINE_EXPORT int stof_engine_mask_save(const stof_engine_mask* mask, const char* path,
                                             char* err, size_t err_len);

/* A plan file, read and validated field by field as `stof plan validate` reads it (engine
 * LoadPlan; the mask is checked by stof_engine_plan_mask). */
STOF_ENGINE_EXPORT int stof_engine_plan_load(const char* path, stof_engine_plan** out, char* err,
                                             size_t err_len);
/* The plan as the JSON text SavePlan writes (the canonical form of what was read), sized as
 * stof_engine_mask_spec_json's. */
STOF_ENGINE_EXPORT size_t stof_engine_plan_json(const stof_engine_plan* plan, char* out,
                                                size_t out_len);
/* The plan's mask: its spec regenerated or its inline data, checked against mask.hash (engine
 * PlanMaskToMask, as `stof plan validate` and `stof run --plan` do). */
STOF_ENGINE_EXPORT int stof_engine_plan_mask(const stof_engine_plan* plan, stof_engine_mask** out,
                                             char* err, size_t err_len);
STOF_ENGINE_EXPORT void stof_engine_plan_free(stof_engine_plan* plan); /* NULL is ignored */

#ifdef __cplusplus
}
#endif

#endif /* STOF_ENGINE_CAPI_H_ */
