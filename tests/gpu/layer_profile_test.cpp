// Layer profiles and the measured fusion ladder on a GPU (skipped without one): bert-small
// 1x128 BigBird profiled on the CUDA backend with the real (CUPTI) profiler, segment by
// segment and as a whole; and the four attention variants measured at BigBird L=512, batch 8,
// 12 heads, d 64.
#include <gtest/gtest.h>

#include <cmath>

#include "device_buffer.h"
#include "engine/fusion/default_scheme.h"
#include "engine/run/layer_runner.h"
#include "gpu_test_util.h"
#include "kernels/cuda_backend.h"
#include "layer_test_util.h"
#include "profiler/ladder_profile.h"
#include "profiler/layer_profile.h"
#include "profiler/profiler.h"

namespace stof {
namespace {

TEST(LayerProfileGpu, BertSmallSegmentsAndLayer) {
  STOF_REQUIRE_GPU();
  auto gpu = kernels::CudaBackend::Create(0);
  ASSERT_TRUE(gpu.IsOk()) << gpu.Message();
  engine::Backend& b = **gpu;
  engine::OpGraph g = engine::testing::Graph("bert-small", 1, 128);
  g.dtype = engine::StorageTypeFor(b);
  const engine::Mask mask = engine::testing::BigBird(128);
  const engine::FusionScheme scheme = engine::DefaultScheme(g);
  const size_t io_bytes = static_cast<size_t>(g.batch * g.seq_len * g.hidden) *
                          static_cast<size_t>(engine::DTypeBytes(g.dtype));
  stof::testing::DeviceBuffer in(io_bytes, gpu->get()), out(io_bytes, gpu->get());
  ASSERT_TRUE(in.Ok() && out.Ok());
  const auto x = engine::PackForBackend(
      engine::UniformHalfValues(g.batch * g.seq_len * g.hidden, 5, -1, 1), g.dtype);
  ASSERT_TRUE(in.Upload(x.data(), x.size()).IsOk());
  engine::LayerIo io;
  io.input = in.Ptr();
  io.output = out.Ptr();
  auto runner = engine::LayerRunner::Create(b, g, mask, scheme, {}, io, 3);
  ASSERT_TRUE(runner.IsOk()) << runner.Message();

  auto prof = profiler::CreateProfiler();
  profiler::LayerProfileOptions o;
  o.measure.runs = 10;
  o.measure.activity_runs = 2;
  auto p = profiler::ProfileLayer(**runner, *prof, b.Device(), o);
  ASSERT_TRUE(p.IsOk()) << p.Message();
  ASSERT_EQ(p->segments.size(), scheme.Segments().size());
  int kernel_sum = 0;
  for (const profiler::SegmentProfile& s : p->segments) {
    const profiler::ProfileResult& r = s.profile;
    ASSERT_TRUE(r.availability.events) << s.ops << ": " << r.availability.events_why_not;
    ASSERT_TRUE(r.summary.latency_us.has_value()) << s.ops;
    EXPECT_GT(*r.summary.latency_us, 0) << s.ops;
    ASSERT_TRUE(r.availability.activity) << s.ops << ": " << r.availability.activity_why_not;
    EXPECT_GE(r.summary.kernels_per_run, 1) << s.ops;
    EXPECT_GE(r.kernels.size(), 1u) << s.ops;
    if (r.availability.range) {
      EXPECT_TRUE(r.summary.dram_bytes.has_value()) << s.ops;
      if (r.summary.dram_bytes) {
        EXPECT_GT(*r.summary.dram_bytes, 0) << s.ops;
      }
    } else {
      EXPECT_FALSE(r.availability.range_why_not.empty());
    }
    kernel_sum += r.summary.kernels_per_run;
  }
  ASSERT_TRUE(p->layer.availability.events) << p->layer.availability.events_why_not;
  EXPECT_GT(*p->layer.summary.latency_us, 0);
  ASSERT_TRUE(p->layer.availability.activity);
  EXPECT_EQ(p->layer.summary.kernels_per_run, kernel_sum);
  // The JSON round trip holds for real measurements too.
  auto back = profiler::LayerProfileFromJson(profiler::LayerProfileToJson(*p));
  ASSERT_TRUE(back.IsOk()) << back.Message();
  runner->reset();
}

TEST(LadderGpu, FourMeasuredRungsFusedBeatsUnfused) {
  STOF_REQUIRE_GPU();
  auto gpu = kernels::CudaBackend::Create(0);
  ASSERT_TRUE(gpu.IsOk()) << gpu.Message();
  auto prof = profiler::CreateProfiler();
  const engine::Workload w{8, 512, 12, 64, engine::DType::kF16};
  const engine::Mask mask = engine::testing::BigBird(512);
  int calls = 0;
  profiler::MeasureOptions o;
  o.runs = 20;
  auto rungs = profiler::MeasureLadder(
      **gpu, *prof, w, mask,
      [&](const std::string&, double) {
        ++calls;
        return true;
      },
      o);
  ASSERT_TRUE(rungs.IsOk()) << rungs.Message();
  ASSERT_EQ(rungs->size(), 4u);
  EXPECT_EQ(calls, 5);  // each rung, done
  EXPECT_EQ((*rungs)[0].variant, engine::MhaVariant::kUnfused);
  EXPECT_EQ((*rungs)[3].variant, engine::MhaVariant::kFused);
  for (const engine::LadderRung& r : *rungs) {
    EXPECT_TRUE(r.measured) << r.name;
    EXPECT_GT(r.us, 0) << r.name;
    EXPECT_FALSE(r.basis.empty());
  }
  EXPECT_LT((*rungs)[3].us, (*rungs)[0].us);
  if (std::isfinite((*rungs)[0].dram_bytes) && std::isfinite((*rungs)[3].dram_bytes)) {
    EXPECT_GT((*rungs)[0].dram_bytes, (*rungs)[3].dram_bytes);
  }

  // A mask of the wrong size is refused before anything runs.
  auto bad = profiler::MeasureLadder(**gpu, *prof, w, engine::testing::BigBird(256), nullptr, o);
  ASSERT_FALSE(bad.IsOk());
  EXPECT_NE(bad.Message().find("mask: expected 512 x 512"), std::string::npos) << bad.Message();
}

}  // namespace
}  // namespace stof
