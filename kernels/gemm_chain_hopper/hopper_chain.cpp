// Host side of the Hopper GEMM chain (hopper_chain.h): the argument, cluster and split checks,
// the default cluster and split groups, the three tensor maps and the dispatch to the E tile
// width's variant.
#include "kernels/gemm_chain_hopper/hopper_chain.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/core/text_format.h"
#include "kernels/common/hopper/device_check.h"
#include "kernels/common/hopper/tensor_map.h"
#include "kernels/cuda_check.h"
#include "kernels/gemm_chain_hopper/hopper_chain_params.h"

namespace stof::kernels {

namespace {

using engine::Str;

constexpr const char* kWhat = "gemm_chain (Hopper kernel): ";
constexpr int64_t kChunk = 64, kRows = 64;
constexpr int64_t kMaxGridYZ = 65535;
static_assert(detail::kHopperChainClusterSlots == kHopperChainMaxCluster,
              "one receive slot per cluster rank");

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The E tile width the kernel instantiates for h: 64, 128 or 256 (past 256: several tiles).
int TileH(int64_t h) { return h <= 64 ? 64 : (h <= 128 ? 128 : 256); }
int64_t HTiles(int64_t h) { return CeilDiv(h, TileH(h)); }

int SmemBytes(int tile_h) {
  if (tile_h == 64) return detail::HopperChainTraits<64>::kSmemBytes;
  if (tile_h == 128) return detail::HopperChainTraits<128>::kSmemBytes;
  return detail::HopperChainTraits<256>::kSmemBytes;
}

// A [batch][rows][cols] fp16 matrix as a 3-D tensor map with 64 x 64 boxes; a batch stride of
// 0 (or one batch) maps a single matrix, which the kernel reads at batch coordinate 0.
engine::Status MapMatrix(const void* base, int64_t rows, int64_t cols, int64_t batch,
                         int64_t stride, const char* name, CUtensorMap* out) {
  hopper::TensorView view;
  view.base = base;
  view.rank = 3;
  const bool batched = batch > 1 && stride != 0;
  const int64_t extent[3] = {cols, rows, batched ? batch : 1};
  const int64_t strides[3] = {1, cols, stride == -1 ? rows * cols : stride};
  for (int i = 0; i < 3; ++i) view.extent[i] = extent[i], view.stride[i] = strides[i];
  const int box[hopper::kMaxTensorRank] = {64, 64, 1, 1, 1};
  return hopper::EncodeTensorMap(view, box, (std::string(kWhat) + name).c_str(), out);
}

std::string ClusterList(const std::vector<int>& clusters) {
  std::string s;
  for (int c : clusters) s += (s.empty() ? "" : ", ") + Str(c);
  return s;
}

// The Hopper kernel's limits on the shape, after the shared rules (buffers not looked at).
engine::Status CheckHopperChainShape(const GemmChainArgs& args) {
  STOF_RETURN_IF_ERROR(CheckGemmChainShape(args));
  if (CeilDiv(args.m, kRows) * HTiles(args.h) > kMaxGridYZ)
    return engine::MakeError(std::string(kWhat) + "m: " + Str(args.m) + " rows make " +
                             Str(CeilDiv(args.m, kRows)) + " tiles of 64, times " +
                             Str(HTiles(args.h)) + " E tiles of h = " + Str(args.h) +
                             ": more than 65535");
  return engine::Status::Ok();
}

}  // namespace

engine::Status CheckHopperChainArgs(const GemmChainArgs& args) {
  STOF_RETURN_IF_ERROR(CheckHopperChainShape(args));
  return CheckGemmChainArgs(args);
}

namespace {

// The cluster sizes of a shape that passed CheckHopperChainShape.
std::vector<int> ClustersOfShape(const GemmChainArgs& args) {
  std::vector<int> out;
  const int64_t chunks = CeilDiv(args.n, kChunk);
  for (int c = 1; c <= kHopperChainMaxCluster && c <= chunks; c *= 2) out.push_back(c);
  return out;
}

// The (row tile, E tile, batch) tiles of a shape.
int64_t TilesOf(const GemmChainArgs& args) {
  return CeilDiv(args.m, kRows) * HTiles(args.h) * args.batch;
}

// HopperChainClusterFor's rule over the shape's `clusters` (non-empty).
int DefaultCluster(const GemmChainArgs& args, const std::vector<int>& clusters, int sms) {
  const int64_t tiles = TilesOf(args);
  for (int c : clusters)
    if ((c >= 2 || clusters.size() == 1) && tiles * c * 100 >= int64_t{45} * sms) return c;
  return clusters.back();
}

// Split groups by default: one where the tiles' clusters reach the cluster rule's 0.45 sms
// CTAs; else enough groups for about one CTA per SM, at most one group per chunk of a
// cluster's share (few tokens through an FFN: one row tile, a thousand chunks of C).
int DefaultSplits(const GemmChainArgs& args, int cluster, int sms) {
  const int64_t ctas = TilesOf(args) * cluster;
  if (ctas * 100 >= int64_t{45} * sms) return 1;
  const int64_t most = CeilDiv(args.n, kChunk) / cluster;
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(most, sms / ctas)));
}

int64_t Align16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

// The split workspace's layout: the fp32 sums of E ([batch][m][h]) from its start, then one
// arrival count per tile from this offset.
int64_t ArrivalsOffset(const GemmChainArgs& a) { return Align16(a.batch * a.m * a.h * 4); }

}  // namespace

engine::Expected<HopperChainLaunch> ResolveHopperChain(const GemmChainArgs& a,
                                                       const HopperChainParams& hp, int sms) {
  STOF_RETURN_IF_ERROR(CheckHopperChainShape(a));
  const auto clusters = ClustersOfShape(a);
  HopperChainLaunch l;
  l.cluster = hp.cluster == 0 ? DefaultCluster(a, clusters, sms) : hp.cluster;
  bool known = false;
  for (int c : clusters) known = known || c == l.cluster;
  if (!known)
    return engine::MakeError(std::string(kWhat) + "params.cluster: " + Str(hp.cluster) +
                             " is not one of " + ClusterList(clusters) + " (powers of two up to " +
                             "the " + Str(CeilDiv(a.n, kChunk)) + " chunks of 64 columns of n = " +
                             Str(a.n) + ")");
  const int64_t chunks = CeilDiv(a.n, kChunk);
  l.splits = hp.splits == 0 ? DefaultSplits(a, l.cluster, sms) : hp.splits;
  if (l.splits < 1 || int64_t{l.splits} * l.cluster > chunks)
    return engine::MakeError(std::string(kWhat) + "params.splits: expected 0 (default) or 1.." +
                             Str(chunks / l.cluster) + " (cluster " + Str(l.cluster) +
                             " times splits at most the " + Str(chunks) +
                             " chunks of 64 columns of n = " + Str(a.n) + "), got " +
                             Str(hp.splits));
  l.h_tiles = static_cast<int>(HTiles(a.h));
  l.row_tiles = static_cast<int>(CeilDiv(a.m, kRows));
  if (l.splits > 1)
    l.workspace_bytes = ArrivalsOffset(a) + Align16(a.batch * int64_t{l.row_tiles} * l.h_tiles * 4);
  return l;
}

std::vector<int> HopperChainClusters(const GemmChainArgs& args) {
  if (!CheckHopperChainShape(args).IsOk()) return {};
  return ClustersOfShape(args);
}

int HopperChainClusterFor(const GemmChainArgs& args, int sms) {
  const auto clusters = HopperChainClusters(args);
  return clusters.empty() ? 0 : DefaultCluster(args, clusters, sms);
}

std::vector<HopperChainParams> HopperChainParamChoices(const GemmChainArgs& args, int sms) {
  std::vector<int> clusters = HopperChainClusters(args);
  if (clusters.empty()) return {};
  const int first = DefaultCluster(args, clusters, sms);
  std::stable_partition(clusters.begin(), clusters.end(), [&](int c) { return c == first; });
  std::vector<HopperChainParams> out;
  for (int c : clusters) {
    HopperChainParams p;
    p.cluster = c;
    const auto l = ResolveHopperChain(args, p, sms);
    if (!l.IsOk()) continue;
    p.splits = l->splits;
    out.push_back(p);
    if (l->splits > 1) {
      p.splits = 1;
      out.push_back(p);
    }
  }
  return out;
}

engine::Status LaunchHopperGemmChain(const GemmChainArgs& a, const HopperChainParams& hp,
                                     void* stream) {
  STOF_RETURN_IF_ERROR(CheckHopperChainArgs(a));
  STOF_RETURN_IF_ERROR(hopper::CheckSm90aDevice(kWhat));
  int device = 0, sms = 0, smem_optin = 0;
  STOF_CUDA_TRY(cudaGetDevice(&device));
  STOF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  STOF_CUDA_TRY(
      cudaDeviceGetAttribute(&smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (hp.reduce != HopperChainReduce::kPush && hp.reduce != HopperChainReduce::kPull)
    return engine::MakeError(std::string(kWhat) + "params.reduce: expected 0 (push) or 1 (pull), "
                             "got " + Str(static_cast<int64_t>(hp.reduce)));
  // Without a workspace the default is one split group (the launches of G1-G12 and the
  // callers that predate the groups); asked for more, the missing workspace is refused.
  HopperChainParams resolved = hp;
  if (hp.splits == 0 && hp.workspace == nullptr) resolved.splits = 1;
  STOF_ASSIGN_OR_RETURN(const HopperChainLaunch l, ResolveHopperChain(a, resolved, sms));
  if (l.workspace_bytes > 0 &&
      (hp.workspace == nullptr || reinterpret_cast<uintptr_t>(hp.workspace) % 16 != 0 ||
       hp.workspace_bytes < l.workspace_bytes))
    return engine::MakeError(std::string(kWhat) + "params.workspace: " + Str(l.splits) +
                             " split groups need " + Str(l.workspace_bytes) +
                             " bytes of zero-filled, 16-byte aligned device memory, got " +
                             (hp.workspace == nullptr ? std::string("none")
                                                      : Str(hp.workspace_bytes) + " bytes"));
  const int tile_h = TileH(a.h);
  if (SmemBytes(tile_h) > smem_optin)
    return engine::MakeError(std::string(kWhat) + "needs " + Str(SmemBytes(tile_h)) +
                             " bytes of shared memory per block, the device allows " +
                             Str(smem_optin));
  CUtensorMap am, bm, dm;
  STOF_RETURN_IF_ERROR(MapMatrix(a.a, a.m, a.k, a.batch, a.stride_a, "a", &am));
  STOF_RETURN_IF_ERROR(MapMatrix(a.b, a.k, a.n, a.batch, a.stride_b, "b", &bm));
  STOF_RETURN_IF_ERROR(MapMatrix(a.d, a.n, a.h, a.batch, a.stride_d, "d", &dm));
  detail::HopperChainKernelParams k;
  k.bias1 = a.bias1, k.bias2 = a.bias2, k.e = a.e;
  k.stride_e = a.batch == 1 ? 0 : (a.stride_e == -1 ? a.m * a.h : a.stride_e);
  k.m = static_cast<int>(a.m), k.n = static_cast<int>(a.n), k.h = static_cast<int>(a.h);
  k.k_steps = static_cast<int>(CeilDiv(a.k, 64));
  k.chunks = static_cast<int>(CeilDiv(a.n, kChunk));
  k.cluster = l.cluster, k.splits = l.splits;
  k.row_tiles = l.row_tiles, k.h_tiles = l.h_tiles;
  if (l.splits > 1) {
    k.workspace = static_cast<float*>(hp.workspace);
    k.arrivals = reinterpret_cast<int*>(static_cast<char*>(hp.workspace) + ArrivalsOffset(a));
  }
  k.a_batched = a.batch > 1 && a.stride_a != 0;
  k.b_batched = a.batch > 1 && a.stride_b != 0;
  k.d_batched = a.batch > 1 && a.stride_d != 0;
  k.act = a.act;
  k.reduce_pull = hp.reduce == HopperChainReduce::kPull ? 1 : 0;
  if (tile_h == 64) return detail::LaunchHopperChainVariant<64>(am, bm, dm, k, a.batch, stream);
  if (tile_h == 128) return detail::LaunchHopperChainVariant<128>(am, bm, dm, k, a.batch, stream);
  return detail::LaunchHopperChainVariant<256>(am, bm, dm, k, a.batch, stream);
}

}  // namespace stof::kernels
