// MeasureLadder (ladder_profile.h).
#include "profiler/ladder_profile.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "engine/core/text_format.h"
#include "engine/run/layer_runner.h"

namespace stof::profiler {

namespace {

using engine::Fmt;

}  // namespace

engine::Expected<std::vector<engine::LadderRung>> MeasureLadder(
    engine::Backend& b, Profiler& p, const engine::Workload& w_in, const engine::Mask& mask,
    const std::function<bool(const std::string&, double)>& progress,
    const MeasureOptions& options) {
  const std::string what = "ladder: ";
  STOF_RETURN_IF_ERROR(w_in.Validate("workload"));
  if (mask.Rows() != w_in.seq_len || mask.Cols() != w_in.seq_len)
    return engine::MakeError(what + "mask: expected " + std::to_string(w_in.seq_len) + " x " +
                             std::to_string(w_in.seq_len) + " (workload.seq_len), got " +
                             std::to_string(mask.Rows()) + " x " + std::to_string(mask.Cols()));
  engine::Workload w = w_in;
  w.dtype = engine::StorageTypeFor(b);
  const int64_t n = w.batch * w.heads * w.seq_len * w.head_dim;
  const size_t bytes = static_cast<size_t>(n) * static_cast<size_t>(engine::DTypeBytes(w.dtype));

  auto configs = b.MhaConfigChoices(w, mask);
  if (!configs.IsOk()) return engine::MakeError(what + "fused: " + configs.Message());
  if (configs->empty()) return engine::MakeError(what + "fused: the backend offers no configuration");
  const engine::MhaConfig fused = configs->front();

  engine::BackendBuffers buf(b);
  void* ptr[4] = {nullptr, nullptr, nullptr, nullptr};  // q, k, v, o
  for (int i = 0; i < 4; ++i) {
    auto a = buf.Add(bytes);
    if (!a.IsOk()) return engine::MakeError(what + "allocate: " + a.Message());
    ptr[i] = *a;
  }
  for (int i = 0; i < 3; ++i) {
    // Seeds 1, 2, 3 for q, k, v: fixed, so every backend and run sees the same inputs.
    const std::vector<uint8_t> host = engine::PackForBackend(
        engine::UniformHalfValues(n, static_cast<uint64_t>(i + 1), -1.0, 1.0), w.dtype);
    STOF_RETURN_IF_ERROR(b.CopyToDevice(ptr[i], host.data(), host.size()));
  }
  STOF_RETURN_IF_ERROR(b.Synchronize());

  const engine::DeviceSpec dev = b.Device();
  const double es = engine::DTypeBytes(w.dtype);
  const double bh = static_cast<double>(w.batch * w.heads);
  MeasureOptions base = options;
  base.flop_count = 4.0 * bh * static_cast<double>(mask.Count()) * static_cast<double>(w.head_dim);
  base.min_bytes = 4.0 * es * static_cast<double>(n);
  base.peak_dram_bytes_per_s = dev.dram_bytes_per_s;
  base.peak_flops_per_s = dev.fp16_tensor_flops;

  std::vector<engine::LadderRung> out;
  const std::vector<engine::MhaVariant>& order = engine::LadderVariants();
  for (size_t i = 0; i < order.size(); ++i) {
    const engine::MhaVariant v = order[i];
    engine::LadderRung r;
    r.variant = v;
    r.name = engine::LadderRungName(v);
    if (progress && !progress(r.name, static_cast<double>(i) / order.size())) return out;
    engine::MhaCall call;
    call.workload = w;
    call.mask = &mask;
    call.config = fused;
    call.q = ptr[0];
    call.k = ptr[1];
    call.v = ptr[2];
    call.o = ptr[3];
    call.variant = v;
    call.sub_len = engine::kLadderSubLen;
    MeasureOptions o = base;
    o.label = "mha " + r.name + " B=" + std::to_string(w.batch) + " H=" + std::to_string(w.heads) +
              " L=" + std::to_string(w.seq_len) + " d=" + std::to_string(w.head_dim);
    auto res = p.Measure(
        [&b, call](void* stream) {
          engine::MhaCall c = call;
          c.stream = stream;
          return b.RunMha(c);
        },
        o);
    if (!res.IsOk()) return engine::MakeError(what + r.name + ": " + res.Message());
    const ProfileResult& pr = *res;
    if (!pr.summary.latency_us)
      return engine::MakeError(what + r.name + ": latency not measured: " +
                               pr.availability.events_why_not);
    r.us = *pr.summary.latency_us;
    r.measured = true;
    std::string config;
    if (v == engine::MhaVariant::kFused)
      config = std::string(engine::MhaKernelName(fused.kernel)) +
               (fused.kernel == engine::MhaKernel::kBlockWise
                    ? " " + std::to_string(fused.block_m) + "x" + std::to_string(fused.block_n) +
                          " w" + std::to_string(fused.num_warps)
                    : std::string());
    else if (v != engine::MhaVariant::kUnfused)
      config = "T=" + std::to_string(engine::kLadderSubLen);
    r.basis = "measured on " + b.Name() + (config.empty() ? "" : " (" + config + ")") + ": " +
              pr.summary.latency_source + " median of " + std::to_string(pr.latency.runs) +
              " runs";
    if (pr.summary.dram_bytes) {
      r.dram_bytes = *pr.summary.dram_bytes;
      r.basis += "; DRAM bytes from counters (" + pr.range_mode + " range)";
    } else {
      r.dram_bytes = std::numeric_limits<double>::quiet_NaN();
      r.basis += "; DRAM bytes unavailable: " +
                 (pr.availability.range ? std::string("no dram__bytes counters")
                                        : pr.availability.range_why_not);
    }
    if (pr.availability.activity) {
      r.kernels = pr.summary.kernels_per_run;
      r.basis += "; " + std::to_string(r.kernels) + " kernels per run (activity trace)";
    } else {
      r.kernels = 0;
      r.basis += "; kernel count unavailable: " + pr.availability.activity_why_not;
    }
    if (pr.summary.ratio_to_floor) r.basis += "; " + Fmt("%.2f", *pr.summary.ratio_to_floor) + "x the floor";
    out.push_back(std::move(r));
  }
  if (progress) progress("done", 1.0);
  return out;
}

}  // namespace stof::profiler
