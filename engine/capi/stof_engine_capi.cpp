// libstof_engine_capi.so (stof_engine_capi.h): the engine's mask, spec and plan readers behind
// C functions. Each function calls the one engine function the CLI calls for the same input
// (LoadMask, MaskSpecFromJson + Generate, LoadPlan, PlanMaskToMask) and adds nothing but the
// copy into C buffers, so the Python package and `stof` cannot disagree on a file.
// Exceptions (std::bad_alloc from a huge legal mask) stop at Guard and become
// STOF_ENGINE_ERR_INTERNAL; they never cross the C boundary.
#include "engine/capi/stof_engine_capi.h"

#include <bit>
#include <cstring>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/json_io.h"
#include "engine/mask/mask.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_json.h"
#include "engine/mask/mask_slices.h"
#include "engine/mask/mask_spec.h"
#include "engine/mask/row_runs.h"
#include "engine/plan/plan.h"

struct stof_engine_mask {
  stof::engine::Mask mask;
  std::optional<stof::engine::MaskSpec> spec;
};

struct stof_engine_plan {
  stof::engine::Plan plan;
  std::string path;
};

namespace {

namespace engine = stof::engine;

void WriteText(char* buf, size_t len, const std::string& text) {
  if (buf == nullptr || len == 0) return;
  const size_t n = std::min(len - 1, text.size());
  std::memcpy(buf, text.data(), n);
  buf[n] = '\0';
}

int Fail(int code, const std::string& message, char* err, size_t err_len) {
  WriteText(err, err_len, message);
  return code;
}

// Runs `body` (returning an int code), turning any escaping exception into
// STOF_ENGINE_ERR_INTERNAL.
template <class Body>
int Guard(char* err, size_t err_len, Body&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(STOF_ENGINE_ERR_INTERNAL, "out of memory", err, err_len);
  } catch (const std::exception& e) {
    return Fail(STOF_ENGINE_ERR_INTERNAL, std::string("internal error: ") + e.what(), err,
                err_len);
  } catch (...) {
    return Fail(STOF_ENGINE_ERR_INTERNAL, "internal error: unknown exception", err, err_len);
  }
}

// `text` into out[0..out_len) with a NUL; the length it needs with the NUL.
size_t CopyOut(const std::string& text, char* out, size_t out_len) {
  WriteText(out, out_len, text);
  return text.size() + 1;
}

int Hand(stof_engine_mask* made, stof_engine_mask** out, char* err, size_t err_len) {
  if (out == nullptr) {
    delete made;
    return Fail(STOF_ENGINE_ERR_INVALID, "out: must not be null", err, err_len);
  }
  *out = made;
  return STOF_ENGINE_OK;
}

// A mask made as row runs (the slice and column-interval forms) handed out as bits: refused
// past Mask::kMaxLen by ToMask's message.
int HandRuns(engine::Expected<engine::RowRuns> runs, stof_engine_mask** out, char* err,
             size_t err_len) {
  if (!runs.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, runs.Message(), err, err_len);
  auto mask = runs->ToMask();
  if (!mask.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, mask.Message(), err, err_len);
  return Hand(new stof_engine_mask{std::move(*mask), std::nullopt}, out, err, err_len);
}

}  // namespace

extern "C" {

int stof_engine_capi_version(void) { return STOF_ENGINE_CAPI_VERSION; }

int stof_engine_mask_load(const char* path, stof_engine_mask** out, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (path == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "path: must not be null", err, err_len);
    auto loaded = engine::LoadMask(path);
    if (!loaded.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, loaded.Message(), err, err_len);
    auto* m = new stof_engine_mask{std::move(loaded->mask), std::nullopt};
    if (loaded->has_spec) m->spec = std::move(loaded->spec);
    return Hand(m, out, err, err_len);
  });
}

namespace {
// The spec of a JSON text (`what` names it in messages, "spec" when null).
engine::Expected<engine::MaskSpec> SpecOfJson(const char* spec_json, size_t spec_len,
                                              const std::string& what) {
  if (spec_json == nullptr) return engine::MakeError(what + ": must not be null");
  STOF_ASSIGN_OR_RETURN(auto j, engine::ParseJson(std::string_view(spec_json, spec_len), what));
  return engine::MaskSpecFromJson(j, what);
}
}  // namespace

int stof_engine_mask_from_spec(const char* spec_json, size_t spec_len, const char* name,
                               stof_engine_mask** out, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    const std::string what = name == nullptr ? "spec" : name;
    auto spec = SpecOfJson(spec_json, spec_len, what);
    if (!spec.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, spec.Message(), err, err_len);
    auto mask = engine::Generate(*spec);
    if (!mask.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, what + ": " + mask.Message(), err, err_len);
    return Hand(new stof_engine_mask{std::move(*mask), std::move(*spec)}, out, err, err_len);
  });
}

int stof_engine_mask_spec_last_rows(const char* spec_json, size_t spec_len, const char* name,
                                    int64_t rows, stof_engine_mask** out, char* err,
                                    size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    const std::string what = name == nullptr ? "spec" : name;
    auto spec = SpecOfJson(spec_json, spec_len, what);
    if (!spec.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, spec.Message(), err, err_len);
    // Only the last rows' runs are built, never the whole mask's.
    auto mask = engine::RowRuns::LastRowsOfSpec(*spec, rows, "rows");
    if (!mask.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, what + ": " + mask.Message(), err, err_len);
    return Hand(new stof_engine_mask{std::move(*mask), std::nullopt}, out, err, err_len);
  });
}

int stof_engine_mask_from_slices(int64_t rows, int64_t cols, const int64_t* slices,
                                 size_t count, stof_engine_mask** out, char* err,
                                 size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (slices == nullptr && count > 0)
      return Fail(STOF_ENGINE_ERR_INVALID, "slices: must not be null", err, err_len);
    std::vector<engine::MaskSlice> list(count);
    for (size_t n = 0; n < count; ++n) {
      const int64_t* v = slices + 5 * n;
      if (v[4] < 0 || v[4] > 3)
        return Fail(STOF_ENGINE_ERR_INVALID,
                    "slices[" + std::to_string(n) + "].kind: must be 0 (full), 1 (causal), 2 "
                    "(inv_causal) or 3 (bi_causal), got " + std::to_string(v[4]),
                    err, err_len);
      list[n] = {v[0], v[1], v[2], v[3], static_cast<engine::SliceKind>(v[4])};
    }
    return HandRuns(engine::RowRunsFromSlices(rows, cols, list), out, err, err_len);
  });
}

int stof_engine_mask_from_column_intervals(int64_t rows, int64_t cols,
                                           const int64_t* lower_begin, const int64_t* lower_end,
                                           const int64_t* upper_begin, const int64_t* upper_end,
                                           stof_engine_mask** out, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (auto size = engine::RowRuns::CheckSize(rows, cols, "column intervals"); !size.IsOk())
      return Fail(STOF_ENGINE_ERR_INVALID, size.Message(), err, err_len);
    const auto column = [&](const int64_t* v) {
      return v == nullptr ? std::vector<int64_t>() : std::vector<int64_t>(v, v + cols);
    };
    const engine::ColumnIntervals masked{column(lower_begin), column(lower_end),
                                         column(upper_begin), column(upper_end)};
    return HandRuns(engine::RowRunsFromColumnIntervals(rows, cols, masked), out, err, err_len);
  });
}

int stof_engine_mask_from_bytes(const uint8_t* bytes, int64_t rows, int64_t cols,
                                stof_engine_mask** out, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (bytes == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "bytes: must not be null", err, err_len);
    auto mask = engine::Mask::Create(rows, cols, "mask");
    if (!mask.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, mask.Message(), err, err_len);
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* row = bytes + r * cols;
      for (int64_t c = 0; c < cols; ++c)
        if (row[c] != 0) mask->Set(r, c);
    }
    return Hand(new stof_engine_mask{std::move(*mask), std::nullopt}, out, err, err_len);
  });
}

int64_t stof_engine_mask_rows(const stof_engine_mask* mask) {
  return mask == nullptr ? 0 : mask->mask.Rows();
}

int64_t stof_engine_mask_cols(const stof_engine_mask* mask) {
  return mask == nullptr ? 0 : mask->mask.Cols();
}

int stof_engine_mask_copy_bytes(const stof_engine_mask* mask, uint8_t* out, size_t out_len,
                                char* err, size_t err_len) {
  if (mask == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "mask: must not be null", err, err_len);
  const engine::Mask& m = mask->mask;
  const size_t need = static_cast<size_t>(m.Rows()) * static_cast<size_t>(m.Cols());
  if (out == nullptr || out_len != need)
    return Fail(STOF_ENGINE_ERR_INVALID,
                "out: expected " + std::to_string(need) + " bytes, got " +
                    (out == nullptr ? std::string("null") : std::to_string(out_len)),
                err, err_len);
  std::memset(out, 0, need);
  for (int64_t r = 0; r < m.Rows(); ++r) {
    uint8_t* row = out + r * m.Cols();
    const uint64_t* words = m.RowWords(r);
    for (int64_t w = 0; w < m.WordsPerRow(); ++w)
      for (uint64_t bits = words[w]; bits != 0; bits &= bits - 1)
        row[w * 64 + std::countr_zero(bits)] = 1;
  }
  return STOF_ENGINE_OK;
}

int stof_engine_mask_hash(const stof_engine_mask* mask, char* out, size_t out_len, char* err,
                          size_t err_len) {
  if (mask == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "mask: must not be null", err, err_len);
  const std::string hex = mask->mask.HashHex();
  if (out == nullptr || out_len < hex.size() + 1)
    return Fail(STOF_ENGINE_ERR_INVALID, "out: needs " + std::to_string(hex.size() + 1) + " bytes",
                err, err_len);
  WriteText(out, out_len, hex);
  return STOF_ENGINE_OK;
}

size_t stof_engine_mask_spec_json(const stof_engine_mask* mask, char* out, size_t out_len) {
  if (mask == nullptr || !mask->spec) return 0;
  return CopyOut(engine::DumpJson(engine::MaskSpecToJson(*mask->spec)), out, out_len);
}

void stof_engine_mask_free(stof_engine_mask* mask) { delete mask; }

int stof_engine_mask_save(const stof_engine_mask* mask, const char* path, char* err,
                          size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (mask == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "mask: must not be null", err, err_len);
    if (path == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "path: must not be null", err, err_len);
    const engine::Status s =
        engine::SaveMask(path, mask->mask, mask->spec ? &*mask->spec : nullptr);
    if (!s.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, s.Message(), err, err_len);
    return STOF_ENGINE_OK;
  });
}

int stof_engine_plan_load(const char* path, stof_engine_plan** out, char* err, size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (path == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "path: must not be null", err, err_len);
    if (out == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "out: must not be null", err, err_len);
    auto plan = engine::LoadPlan(path);
    if (!plan.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, plan.Message(), err, err_len);
    *out = new stof_engine_plan{std::move(*plan), path};
    return STOF_ENGINE_OK;
  });
}

size_t stof_engine_plan_json(const stof_engine_plan* plan, char* out, size_t out_len) {
  if (plan == nullptr) return 0;
  return CopyOut(engine::PlanToText(plan->plan), out, out_len);
}

int stof_engine_plan_mask(const stof_engine_plan* plan, stof_engine_mask** out, char* err,
                          size_t err_len) {
  return Guard(err, err_len, [&]() -> int {
    if (plan == nullptr) return Fail(STOF_ENGINE_ERR_INVALID, "plan: must not be null", err, err_len);
    auto mask = engine::PlanMaskToMask(plan->plan.mask, plan->path);
    if (!mask.IsOk()) return Fail(STOF_ENGINE_ERR_INVALID, mask.Message(), err, err_len);
    auto* m = new stof_engine_mask{std::move(*mask), std::nullopt};
    // The spec describes the square mask; a plan of a cache's last rows holds only those rows.
    if (plan->plan.mask.has_spec && plan->plan.mask.last_rows == 0) m->spec = plan->plan.mask.spec;
    return Hand(m, out, err, err_len);
  });
}

void stof_engine_plan_free(stof_engine_plan* plan) { delete plan; }

}  // extern "C"
