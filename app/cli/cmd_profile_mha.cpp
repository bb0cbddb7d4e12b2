// `stof profile mha` after the reference check: one profiler measurement of the kernel over
// rotating inputs, with the kernel's choice and both checks as notes. Called by RunBench
// (cmd_bench.cpp) in profile mode; built only with CUDA.
#include <string>

#include "app/cli/cmd_bench_internal.h"
#include "engine/core/text_format.h"
#include "profiler/profiler.h"

namespace stof::app::bench_detail {

using engine::Fmt;

namespace {

// " BMxT = ..." for sd/sdf, " BMxBN, W warps (source)" for the block-wise kernel, else "".
std::string ChoiceDetail(const kernels::MhaChoice& c) {
  if (c.recompose)
    return " BMxT " + std::to_string(c.recompose_params.block_m) + "x" +
           std::to_string(c.recompose_params.sub_len) + " (" + c.params_source + ")";
  if (!c.native && c.config.kernel == engine::MhaKernel::kBlockWise)
    return " " + std::to_string(c.config.block_m) + "x" + std::to_string(c.config.block_n) +
           ", " + std::to_string(c.config.num_warps) + " warps (" + c.params_source + ")";
  return std::string();
}

}  // namespace

int ProfileMhaRun(const std::string& cmd, const ProfileArgs& p, MhaInputSets& sets,
                  const kernels::PreparedMha& mha, const engine::Workload& w,
                  const engine::DeviceSpec& spec, const std::string& label,
                  const MhaBenchCheck& check) {
  profiler::MeasureOptions o = MeasureOptionsFrom(p, spec);
  o.label = "sparse MHA " + label + ", B " + std::to_string(w.batch) + ", H " +
            std::to_string(w.heads) + ", d " + std::to_string(w.head_dim);
  o.flop_count = mha.UsefulFlops(w);
  o.min_bytes = MhaMinBytes(w);
  auto result = profiler::CreateProfiler()->Measure(sets.Work(mha), o);
  if (!result.IsOk()) return Fail(cmd, result.Message());
  profiler::ProfileResult& r = *result;
  const kernels::MhaChoice& c = mha.Choice();
  r.notes.push_back(std::string("kernel: ") + kernels::MhaChoiceKernelName(c) +
                    ChoiceDetail(c));
  r.notes.push_back("reference check before measuring: worst row error " +
                    Fmt("%.3e", check.row_err) + " (tolerance " + Fmt("%.0e", check.tolerance) +
                    "), passed");
  auto bad = sets.CountNonFinite();
  if (!bad.IsOk()) return Fail(cmd, bad.Message());
  const std::string check_note =
      "output check: " + std::to_string(*bad) + " non-finite values in the measured launches' outputs";
  r.notes.push_back(check_note);
  return ReportProfile(cmd, p, r, *bad == 0, check_note);
}

}  // namespace stof::app::bench_detail
