// `stof bench mha`'s report: the choice and the reference check as text while the steps run,
// then everything measured as text or as one JSON object (--json). Called by RunBench
// (cmd_bench.cpp); built only with CUDA.
#include <cstdio>
#include <string>

#include "app/cli/cmd_bench_internal.h"
#include "engine/core/text_format.h"
#include "engine/select/kernel_select.h"

namespace stof::app::bench_detail {

using engine::Fmt;
using engine::FormatBytes;

namespace {

// ", 8 key/value heads, L_q 1" where the workload is not square MHA, else "".
std::string ShapeText(const engine::Workload& w) {
  std::string t;
  if (w.KvHeads() != w.heads) t += ", " + std::to_string(w.KvHeads()) + " key/value heads";
  if (w.QLen() != w.seq_len) t += ", L_q " + std::to_string(w.QLen());
  return t;
}

nlohmann::json CountersJson(const MhaBenchTiming& t, double min_bytes) {
  if (!t.dram_read || !t.dram_write)
    return {{"available", false}, {"why_not", t.counters_why_not}};
  nlohmann::json cj = {{"available", true},
                       {"dram_bytes_read", *t.dram_read},
                       {"dram_bytes_write", *t.dram_write},
                       {"dram_bytes", *t.dram_read + *t.dram_write},
                       {"dram_over_min_bytes", (*t.dram_read + *t.dram_write) / min_bytes}};
  if (t.lts_bytes) cj["lts_bytes"] = *t.lts_bytes;
  if (t.tensor_pipe_pct) cj["tensor_pipe_pct"] = *t.tensor_pipe_pct;
  return cj;
}

}  // namespace

void PrintChoiceText(const BenchProblem& pb, const kernels::PreparedMha& mha,
                     const kernels::CudaBackend& backend, const engine::DeviceSpec& spec) {
  const kernels::MhaChoice& c = mha.Choice();
  const engine::Workload& w = pb.workload;
  std::printf("mask        %s (nnz %lld, density %s)\n", pb.source.label.c_str(),
              static_cast<long long>(mha.Nnz()), Percent(pb.source.mask.Density()).c_str());
  std::printf("workload    batch %lld, heads %lld, L %lld, d %lld, %s%s\n",
              static_cast<long long>(w.batch), static_cast<long long>(w.heads),
              static_cast<long long>(w.seq_len), static_cast<long long>(w.head_dim),
              engine::DTypeName(w.dtype), ShapeText(w).c_str());
  std::printf("device      %s (%d SMs, L2 %s)\n", backend.Name().c_str(), spec.sm_count,
              FormatBytes(static_cast<double>(spec.l2_bytes)).c_str());
  if (const kernels::RecomposedMha* rec = mha.Recomposed())
    std::printf("kernel      %s (%s; BM x T %d x %d from %s; %lld tiles per head; workspace "
                "%s)\n",
                kernels::RecomposeVariantName(rec->Variant()),
                rec->Variant() == kernels::RecomposeVariant::kDecomposed
                    ? "softmax decomposed: cuBLAS Q K^T, LS, IR, GS kernels, cuBLAS P V"
                    : "softmax decomposed + fused: Q K^T + LS kernel, IR, GS + P V kernel",
                rec->Params().block_m, rec->Params().sub_len, c.params_source.c_str(),
                static_cast<long long>(rec->TilesPerHead()),
                FormatBytes(static_cast<double>(rec->WorkspaceBytes())).c_str());
  else if (c.native)
    std::printf("kernel      native (unfused: cuBLAS Q K^T, scale+mask+softmax kernel, cuBLAS "
                "P V; S workspace %s)\n",
                FormatBytes(static_cast<double>(mha.Native()->WorkspaceBytes())).c_str());
  else if (c.config.kernel == engine::MhaKernel::kRowWise)
    std::printf("kernel      row_wise (kernel from %s)\n", c.kernel_source.c_str());
  else
    std::printf("kernel      block_wise %lldx%lld, %lld warps (kernel from %s, parameters from "
                "%s)\n",
                static_cast<long long>(c.config.block_m), static_cast<long long>(c.config.block_n),
                static_cast<long long>(c.config.num_warps), c.kernel_source.c_str(),
                c.params_source.c_str());
  if (!w.IsSquareMha()) {
    if (!c.note.empty()) std::printf("note        %s\n", c.note.c_str());
    std::fflush(stdout);
    return;
  }
  std::printf("            Eq. 1 threshold %s -> %s; Eq. 2 pick %lldx%lld, %lld warps\n",
              Fmt("%.4f", c.selection.eq1.threshold).c_str(),
              engine::MhaKernelName(c.selection.eq1.kernel),
              static_cast<long long>(c.eq2_pick_block_m),
              static_cast<long long>(c.eq2_pick_block_n),
              static_cast<long long>(c.eq2_pick_num_warps));
  if (!c.note.empty()) std::printf("note        %s\n", c.note.c_str());
  std::fflush(stdout);
}

void PrintCheckText(const MhaBenchCheck& chk) {
  std::printf(
      "check       %s: batch 1, %lld head(s), worst row error %s (tolerance %s), "
      "global %s, %lld non-finite, %lld non-zero empty rows\n",
      chk.passed ? "passed" : "FAILED", static_cast<long long>(chk.workload.heads),
      Fmt("%.3e", chk.row_err).c_str(), Fmt("%.0e", chk.tolerance).c_str(),
      Fmt("%.3e", chk.global_err).c_str(), static_cast<long long>(chk.non_finite),
      static_cast<long long>(chk.nonzero_empty_rows));
  std::fflush(stdout);
}

nlohmann::json BenchJson(const BenchReport& r) {
  const kernels::PreparedMha& mha = *r.setup.mha;
  const engine::Workload& w = r.problem.workload;
  const engine::Mask& mask = r.problem.source.mask;
  const kernels::LayoutPrepTiming& pt = mha.Timing();
  const profiler::LatencyStats& lat = r.timing.latency;
  const MhaBenchFloor& f = r.floor;
  nlohmann::json j;
  j["command"] = "bench mha";
  j["mask"] = {{"source", r.problem.source.label},
               {"seq_len", w.seq_len},
               {"nnz", mha.Nnz()},
               {"density", mask.Density()},
               {"hash", mask.HashHex()}};
  j["workload"] = {{"batch", w.batch},
                   {"heads", w.heads},
                   {"kv_heads", w.KvHeads()},
                   {"seq_len", w.seq_len},
                   {"q_len", w.QLen()},
                   {"head_dim", w.head_dim},
                   {"dtype", engine::DTypeName(w.dtype)}};
  j["device"] = {{"name", r.backend.Name()},
                 {"sm_count", r.spec.sm_count},
                 {"l2_bytes", r.spec.l2_bytes},
                 {"peak_dram_bytes_per_s", r.spec.dram_bytes_per_s},
                 {"peak_fp16_tensor_flops", r.spec.fp16_tensor_flops}};
  j["choice"] = ChoiceJson(mha.Choice());
  j["layout"] = {{"valid_blocks", mha.ValidBlocks()},
                 {"part_blocks", mha.PartBlocks()},
                 {"device_bytes", mha.DeviceBytes()},
                 {"select_ms", r.setup.select_ms},
                 {"host_build_ms", pt.host_build_ms},
                 {"upload_ms", pt.upload_ms}};
  if (const kernels::NativeMha* n = mha.Native())
    j["layout"]["native_workspace_bytes"] = n->WorkspaceBytes();
  if (const kernels::RecomposedMha* rec = mha.Recomposed()) {
    j["layout"]["recompose_workspace_bytes"] = rec->WorkspaceBytes();
    j["layout"]["recompose_tiles_per_head"] = rec->TilesPerHead();
  }
  j["check"] = CheckJson(r.check);
  j["ceilings"] = {{"copy_bytes", CeilingCopyBytes()},
                   {"copy_median_us", r.ceilings.copy_us},
                   {"dram_bytes_per_s", r.ceilings.dram_bytes_per_s},
                   {"gemm", "cuBLAS fp16 4096^3, fp32 accumulate"},
                   {"gemm_median_us", r.ceilings.gemm_us},
                   {"tensor_flops_per_s", r.ceilings.tensor_flops_per_s},
                   {"gemm_check_err", r.ceilings.gemm_check_err}};
  j["rotation"] = {{"set_bytes", r.rotation.set_bytes},
                   {"sets_wanted", r.rotation.sets_wanted},
                   {"sets", r.rotation.sets},
                   {"total_bytes", r.rotation.total_bytes},
                   {"l2_bytes", r.rotation.l2_bytes},
                   {"free_bytes_before", r.rotation.free_bytes},
                   {"capped_by_free_memory", r.rotation.capped}};
  j["latency"] = {{"runs", lat.runs},
                  {"warmup", r.warmup},
                  {"median_us", lat.median_us},
                  {"min_us", lat.min_us},
                  {"max_us", lat.max_us},
                  {"mean_us", lat.mean_us},
                  {"wall_us_per_run", lat.wall_us_per_run},
                  {"samples_us", lat.samples_us}};
  // The kernel alone (CUPTI activity, median of the traced runs): the event median above
  // also holds the launch gap that per-launch event pairs carry (docs/profiler.md).
  if (r.timing.kernel_activity_us)
    j["latency"]["kernel_activity_us"] = *r.timing.kernel_activity_us;
  else
    j["latency"]["kernel_activity_why_not"] = r.timing.activity_why_not;
  j["flops"] = {{"useful", f.useful_flops},
                {"kernel", f.kernel_flops},
                {"effective_tflops", f.effective_tflops}};
  j["floor"] = {{"min_bytes", f.min_bytes},
                {"bytes_us", f.bytes_s * 1e6},
                {"flops_us", f.flops_s * 1e6},
                {"floor_us", f.floor_s * 1e6},
                {"bound", f.memory_bound ? "memory" : "compute"},
                {"ratio_to_floor", f.ratio}};
  j["counters"] = CountersJson(r.timing, f.min_bytes);
  return j;
}

void PrintBenchText(const BenchReport& r) {
  const kernels::PreparedMha& mha = *r.setup.mha;
  const kernels::LayoutPrepTiming& pt = mha.Timing();
  const MhaBenchCeilings& ceil = r.ceilings;
  const MhaBenchRotation& rot = r.rotation;
  const profiler::LatencyStats& lat = r.timing.latency;
  const MhaBenchTiming& t = r.timing;
  const MhaBenchFloor& f = r.floor;
  std::printf("layout      %lld valid blocks (%lld part), %s on the device; selection %.3f ms, "
              "host build %.3f ms, upload %.3f ms (not in the latency)\n",
              static_cast<long long>(mha.ValidBlocks()), static_cast<long long>(mha.PartBlocks()),
              FormatBytes(static_cast<double>(mha.DeviceBytes())).c_str(), r.setup.select_ms,
              pt.host_build_ms, pt.upload_ms);
  std::printf("ceilings    DRAM %.1f GB/s (256 MiB copy, %.2f us); tensor %.1f TFLOP/s (cuBLAS "
              "fp16 4096^3, %.2f us)\n",
              ceil.dram_bytes_per_s * 1e-9, ceil.copy_us, ceil.tensor_flops_per_s * 1e-12,
              ceil.gemm_us);
  std::printf("rotation    %lld input set(s) of %s = %s (L2 %s%s)\n",
              static_cast<long long>(rot.sets), FormatBytes(static_cast<double>(rot.set_bytes)).c_str(),
              FormatBytes(static_cast<double>(rot.total_bytes)).c_str(),
              FormatBytes(static_cast<double>(rot.l2_bytes)).c_str(),
              rot.capped ? "; capped by free memory: below 2x L2" : "");
  std::printf("latency     %.2f us median of %d runs (min %.2f, max %.2f), CUDA events, %d warm-up\n",
              lat.median_us, lat.runs, lat.min_us, lat.max_us, r.warmup);
  if (t.kernel_activity_us)
    std::printf("            kernel alone %.2f us (CUPTI activity); host %.2f us per launch\n",
                *t.kernel_activity_us, lat.wall_us_per_run);
  std::printf("throughput  %.2f TFLOP/s effective (4 B H nnz d = %s FLOP)\n", f.effective_tflops,
              Fmt("%.4g", f.useful_flops).c_str());
  std::printf("floor       %.2f us = max(bytes %s / DRAM = %.2f us, valid-block FLOPs %s / tensor "
              "= %.2f us) -> %s-bound; %.2f x the floor\n",
              f.floor_s * 1e6, FormatBytes(f.min_bytes).c_str(), f.bytes_s * 1e6,
              Fmt("%.4g", f.kernel_flops).c_str(), f.flops_s * 1e6,
              f.memory_bound ? "memory" : "compute", f.ratio);
  if (t.dram_read && t.dram_write)
    std::printf("DRAM        read %s, write %s per launch (CUPTI, auto range) = %.2f x Q+K+V+O%s\n",
                FormatBytes(*t.dram_read).c_str(), FormatBytes(*t.dram_write).c_str(),
                (*t.dram_read + *t.dram_write) / f.min_bytes,
                t.tensor_pipe_pct ? (", tensor pipe " + Fmt("%.1f", *t.tensor_pipe_pct) + " %").c_str()
                                  : "");
  else
    std::printf("DRAM        not measured: %s\n", t.counters_why_not.c_str());
}

}  // namespace stof::app::bench_detail
