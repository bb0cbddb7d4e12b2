// Fuzz target: the Python package's loaders, i.e. the C API of libstof_engine_capi.so
// (engine/capi/stof_engine_capi.h, compiled into this target) that python/stof/_engine.py
// calls: a mask file (the extension by the content's magic: .npy, .png, else .json) or, for a
// JSON object with "schema_version", a plan and its mask. Invariants: every failure is a code
// with a message naming the file; a loaded mask copied out as bytes and read back hashes the
// same; a spec mask's spec regenerates it, and its last row from the spec's row runs is the
// mask's; a plan's mask has the plan's mask.hash. JSON specs
// and plans over L = kMaxSpecLen are not generated (slow, not a bug; as fuzz_json_mask.cpp).
#include <cstring>
#include <string>
#include <vector>

#include "engine/capi/stof_engine_capi.h"
#include "engine/core/json_io.h"
#include "tests/fuzz/fuzz_input.h"

namespace {

constexpr int64_t kMaxSpecLen = 2048;

// seq_len of a JSON mask's spec or a plan's workload, when it says more than kMaxSpecLen.
bool Large(const nlohmann::json& j) {
  for (const char* outer : {"spec", "workload"}) {
    if (!j.contains(outer) || !j[outer].is_object() || !j[outer].contains("seq_len")) continue;
    const auto& L = j[outer]["seq_len"];
    if (L.is_number() && L.get<double>() > kMaxSpecLen) return true;
  }
  return false;
}

template <class Handle>
std::string Text(size_t (*fn)(const Handle*, char*, size_t), const Handle* h) {
  const size_t n = fn(h, nullptr, 0);
  if (n == 0) return "";
  std::string s(n, '\0');
  fn(h, s.data(), n);
  s.resize(n - 1);
  return s;
}

std::string Hash(const stof_engine_mask* m) {
  char hex[17] = {};
  char err[256];
  stof::fuzz::Require(stof_engine_mask_hash(m, hex, sizeof hex, err, sizeof err) == STOF_ENGINE_OK,
                      "a loaded mask hashes");
  return hex;
}

// The Python side's reads of a mask handle: its bytes, hash and spec; then the bytes and the
// spec made into masks again, which must hash the same.
void CheckMask(const stof_engine_mask* m) {
  using stof::fuzz::Require;
  const int64_t rows = stof_engine_mask_rows(m), cols = stof_engine_mask_cols(m);
  Require(rows >= 1 && cols >= 1, "a loaded mask is not empty");
  std::vector<uint8_t> bytes(static_cast<size_t>(rows * cols));
  char err[512];
  Require(stof_engine_mask_copy_bytes(m, bytes.data(), bytes.size(), err, sizeof err) == 0,
          "a loaded mask copies out");
  const std::string hash = Hash(m);
  stof_engine_mask* back = nullptr;
  Require(stof_engine_mask_from_bytes(bytes.data(), rows, cols, &back, err, sizeof err) == 0 &&
              Hash(back) == hash,
          "a mask's bytes read back hash the same");
  stof_engine_mask_free(back);
  const std::string spec = Text(&stof_engine_mask_spec_json, m);
  if (spec.empty()) return;
  stof_engine_mask* again = nullptr;
  Require(stof_engine_mask_from_spec(spec.data(), spec.size(), "again", &again, err, sizeof err) ==
                  0 && Hash(again) == hash,
          "a mask's spec regenerates it");
  stof_engine_mask_free(again);
  // Its last row built from the spec's row runs (a KV cache's decode row) is the mask's.
  stof_engine_mask* last = nullptr;
  std::vector<uint8_t> row(static_cast<size_t>(cols));
  Require(stof_engine_mask_spec_last_rows(spec.data(), spec.size(), "last", 1, &last, err,
                                          sizeof err) == 0 &&
              stof_engine_mask_copy_bytes(last, row.data(), row.size(), err, sizeof err) == 0 &&
              std::memcmp(row.data(), bytes.data() + (rows - 1) * cols, row.size()) == 0,
          "a spec's last row from its row runs is the mask's last row");
  stof_engine_mask_free(last);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using stof::fuzz::Require;
  const std::string text = stof::fuzz::AsString(data, size);
  char err[1024] = {};
  if (text.rfind("\x93NUMPY", 0) == 0 || text.rfind("\x89PNG", 0) == 0) {
    const std::string path =
        stof::fuzz::WriteInput(data, size, text[0] == '\x89' ? "fuzz.png" : "fuzz.npy");
    stof_engine_mask* m = nullptr;
    if (stof_engine_mask_load(path.c_str(), &m, err, sizeof err) == STOF_ENGINE_OK) CheckMask(m);
    else Require(std::strncmp(err, path.c_str(), path.size()) == 0, "the message names the file");
    stof_engine_mask_free(m);
    return 0;
  }
  auto j = stof::engine::ParseJson(text, "");
  if (j.IsOk() && j->is_object() && Large(*j)) return 0;
  const bool plan = j.IsOk() && j->is_object() && j->contains("schema_version");
  const std::string path = stof::fuzz::WriteInput(data, size, plan ? "fuzz.plan.json" : "fuzz.json");
  if (!plan) {
    stof_engine_mask* m = nullptr;
    if (stof_engine_mask_load(path.c_str(), &m, err, sizeof err) == STOF_ENGINE_OK) CheckMask(m);
    else Require(std::strncmp(err, path.c_str(), path.size()) == 0, "the message names the file");
    stof_engine_mask_free(m);
    return 0;
  }
  stof_engine_plan* p = nullptr;
  if (stof_engine_plan_load(path.c_str(), &p, err, sizeof err) != STOF_ENGINE_OK) {
    Require(std::strncmp(err, path.c_str(), path.size()) == 0, "the message names the file");
    return 0;
  }
  auto doc = stof::engine::ParseJson(Text(&stof_engine_plan_json, p), "again");
  Require(doc.IsOk() && doc->is_object(), "a plan's JSON parses");
  stof_engine_mask* m = nullptr;
  if (stof_engine_plan_mask(p, &m, err, sizeof err) == STOF_ENGINE_OK) {
    CheckMask(m);
    Require(Hash(m) == (*doc)["mask"]["hash"].get<std::string>(), "a plan's mask has its hash");
  }
  stof_engine_mask_free(m);
  stof_engine_plan_free(p);
  return 0;
}
