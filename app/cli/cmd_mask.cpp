// `stof mask`: generate a mask (or convert a mask file) and print its statistics; --out
// writes it as PNG, NPY or JSON (chosen by extension).
#include <cstdio>
#include <memory>

#include "app/cli/cli_common.h"
#include "app/common/option_checks.h"
#include "engine/mask/mask_io.h"
#include "engine/mask/mask_json.h"

namespace stof::app {

namespace {
struct MaskArgs {
  MaskSourceOptions source;
  std::string out;
  bool json = false;
};

int RunMask(const MaskArgs& a) {
  auto src = ResolveMaskSource(a.source);
  if (!src.IsOk()) return Fail("mask", src.Message());
  const engine::Mask& m = src->mask;
  if (!a.out.empty()) {
    engine::Status s = engine::SaveMask(a.out, m, src->has_spec ? &src->spec : nullptr);
    if (!s.IsOk()) return Fail("mask", s.Message());
  }
  const int64_t nnz = m.Count();
  if (a.json) {
    nlohmann::json j;
    j["source"] = src->label;
    if (src->has_spec) j["spec"] = engine::MaskSpecToJson(src->spec);
    j["rows"] = m.Rows();
    j["cols"] = m.Cols();
    j["nnz"] = nnz;
    j["density"] = m.Density();
    j["sparsity"] = m.Sparsity();
    j["hash"] = m.HashHex();
    if (!a.out.empty()) j["out"] = a.out;
    PrintJson("mask", j);
    return kExitOk;
  }
  std::printf("mask      %s\n", src->label.c_str());
  std::printf("size      %lld x %lld\n", static_cast<long long>(m.Rows()),
              static_cast<long long>(m.Cols()));
  std::printf("nnz       %lld\n", static_cast<long long>(nnz));
  std::printf("density   %s\n", Percent(m.Density()).c_str());
  std::printf("sparsity  %s\n", Percent(m.Sparsity()).c_str());
  std::printf("hash      %s\n", m.HashHex().c_str());
  if (!a.out.empty()) std::printf("wrote     %s\n", a.out.c_str());
  return kExitOk;
}
}  // namespace

void RegisterMaskCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<MaskArgs>();
  CLI::App* cmd = app.add_subcommand(
      "mask", "Generate a mask (--pattern) or read one (--mask) and print nnz, density, sparsity");
  AddMaskSourceOptions(cmd, &args->source);
  cmd->add_option("--out", args->out, "Write the mask to FILE (.png, .npy or .json)")
      ->check(NonEmpty());
  cmd->add_flag("--json", args->json, "Print machine-readable JSON");
  cmd->callback([args, exit_code] { *exit_code = RunMask(*args); });
}

}  // namespace stof::app
