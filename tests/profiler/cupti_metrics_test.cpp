// CPU (CUDA builds with CUPTI): metric resolution through CUPTI's profiler host API, which
// needs only a chip name, so the metric list, units, aliases and per-metric failures are
// checked without a GPU (here for the H100's chip, GH100, and a Blackwell one).
#include <gtest/gtest.h>

#include "profiler/capture/cupti_range.h"

namespace sp = stof::profiler;
namespace sd = stof::profiler::detail;

namespace {
const sp::MetricInfo* Find(const sd::MetricConfig& c, const std::string& name) {
  for (const sp::MetricInfo& m : c.infos)
    if (m.name == name || m.alias == name) return &m;
  return nullptr;
}
}  // namespace

TEST(CuptiMetrics, DefaultsResolveWithUnitsOnGH100) {
  auto c = sd::ResolveMetrics("GH100", {}, sp::DefaultMetricNames());
  ASSERT_TRUE(c.IsOk()) << c.Message();
  ASSERT_EQ(c->infos.size(), 6u);
  for (const sp::MetricInfo& m : c->infos) EXPECT_TRUE(m.available) << m.name << ": " << m.why_not;
  EXPECT_EQ(Find(*c, "dram__bytes_read.sum")->unit, "byte");
  EXPECT_EQ(Find(*c, "dram__bytes_write.sum")->unit, "byte");
  EXPECT_EQ(Find(*c, "lts__t_bytes.sum")->unit, "byte");
  EXPECT_EQ(Find(*c, "gpu__time_duration.sum")->unit, "nanosecond");
  EXPECT_EQ(Find(*c, "sm__throughput.avg.pct_of_peak_sustained_elapsed")->unit, "percent");
  const sp::MetricInfo* tensor = Find(*c, "tensor_pipe");
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(tensor->alias, "tensor_pipe");
  EXPECT_EQ(tensor->name, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed");
  EXPECT_EQ(tensor->unit, "percent");
  EXPECT_EQ(c->names.size(), 6u);
  EXPECT_FALSE(c->config_image.empty());
  EXPECT_GE(c->passes, 1);
  ASSERT_NE(c->host, nullptr);
}

TEST(CuptiMetrics, UnknownMetricReportedOthersKept) {
  auto c = sd::ResolveMetrics("GH100", {},
                              {"dram__bytes_read.sum", "bogus__metric.sum", "dram__bytes_read",
                               "dram__bytes_write.sum", "dram__bytes_read.sum"});
  ASSERT_TRUE(c.IsOk()) << c.Message();
  ASSERT_EQ(c->infos.size(), 5u);
  EXPECT_TRUE(c->infos[0].available);
  EXPECT_FALSE(c->infos[1].available);
  EXPECT_NE(c->infos[1].why_not.find("unknown metric on chip GH100"), std::string::npos)
      << c->infos[1].why_not;
  EXPECT_NE(c->infos[1].why_not.find("CUPTI_ERROR_INVALID_METRIC_NAME"), std::string::npos);
  // Known to CUPTI but refused in a configuration without a rollup.
  EXPECT_FALSE(c->infos[2].available);
  EXPECT_NE(c->infos[2].why_not.find("rollup"), std::string::npos) << c->infos[2].why_not;
  EXPECT_TRUE(c->infos[3].available);
  EXPECT_FALSE(c->infos[4].available);  // duplicate
  EXPECT_EQ(c->infos[4].why_not, "listed twice; collected once");
  EXPECT_EQ(c->names, (std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes_write.sum"}));
  EXPECT_EQ(c->passes, 1);
}

TEST(CuptiMetrics, TensorAliasFallsBackOnNewerChips) {
  // Blackwell (GB100) has no HMMA-pipe metric; the alias takes the generic tensor pipe.
  auto c = sd::ResolveMetrics("GB100", {}, {sp::kTensorPipeAlias});
  ASSERT_TRUE(c.IsOk()) << c.Message();
  ASSERT_EQ(c->infos.size(), 1u);
  EXPECT_TRUE(c->infos[0].available) << c->infos[0].why_not;
  EXPECT_EQ(c->infos[0].name, sd::TensorPipeCandidates()[1]);
}

TEST(CuptiMetrics, NothingCollectable) {
  auto c = sd::ResolveMetrics("GH100", {}, {"nope.sum"});
  ASSERT_TRUE(c.IsOk()) << c.Message();
  EXPECT_TRUE(c->names.empty());
  EXPECT_TRUE(c->config_image.empty());
  EXPECT_EQ(c->passes, 0);
}

TEST(CuptiMetrics, UnknownChipIsAnError) {
  auto c = sd::ResolveMetrics("XX999", {}, sp::DefaultMetricNames());
  ASSERT_FALSE(c.IsOk());
  EXPECT_NE(c.Message().find("XX999"), std::string::npos) << c.Message();
}
