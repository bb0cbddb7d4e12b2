// The Hopper block-sparse attention kernel (sm_90a), composed from its parts: the TMA load
// pipeline (hopper_pipeline.cuh), the visited-block lists (hopper_block_list.cuh), the element
// masks (hopper_mask.cuh), the online softmax on accumulator fragments
// (kernels/common/fragment_softmax.cuh), the warpgroup GEMM steps
// (kernels/common/hopper/warpgroup_gemm.cuh), the merge of
// a tile's chunks when its blocks are split over CTAs (hopper_split.cuh) and the TMA epilogue
// (hopper_epilogue.cuh). Included only by the instantiation files
// (hopper_attention_d64.cu, _d128.cu, _d256.cu); the host dispatch sees
// hopper_attention_params.h.
//
// One CTA computes 128 (or 64) query rows of one (batch, head): a producer (one thread issues
// all TMA copies) and two (or one) consumer warpgroups of 64 rows each; the roles and their
// registers: HopperAttentionTraits (hopper_attention_params.h). Per visited K/V block a consumer computes
// S = Q K^T with wgmma (both operands in shared memory), masks it (part blocks: bitmap; a block
// running past L: key limit; full blocks: nothing), updates the online softmax in fp32, and
// accumulates O += P V with P as the register A operand (RS wgmma), so P never touches shared
// memory. By default two consumers take turns issuing their GEMMs (pingpong, below), so one's
// softmax overlaps the other's GEMMs; with one consumer (BLOCK_M 64) the CTAs sharing an SM
// do that without turns. Design and measurements: docs/kernels-hopper.md.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <cstdint>

#include "kernels/attention_hopper/hopper_attention_params.h"
#include "kernels/attention_hopper/hopper_block_list.cuh"
#include "kernels/attention_hopper/hopper_epilogue.cuh"
#include "kernels/attention_hopper/hopper_mask.cuh"
#include "kernels/attention_hopper/hopper_pipeline.cuh"
#include "kernels/attention_hopper/hopper_scheduler.cuh"
#include "kernels/attention_hopper/hopper_split.cuh"
#include "kernels/common/fragment_softmax.cuh"
#include "kernels/common/hopper/grid_dependency.cuh"
#include "kernels/common/hopper/mbarrier.cuh"
#include "kernels/common/hopper/warpgroup.cuh"
#include "kernels/common/hopper/warpgroup_gemm.cuh"
#include "kernels/common/hopper/wgmma.cuh"
#include "kernels/cuda_check.h"

namespace stof::kernels::detail {

// S = Q K^T for the warpgroup's 64 rows (`q` = its first row in panel 0) and one K stage.
template <class T>
__device__ __forceinline__ void GemmQK(float (&s)[T::kSAcc], uint32_t q, uint32_t k) {
  hopper::GemmSsKMajor<T::kHeadDim, T::kBlockN, T::kBf16>(s, q, T::kQPanelBytes, k,
                                                          T::kKvPanelBytes);
}

// O += P V for one V stage; `a` holds P's 16-key slices as A fragments (made from S).
template <class T>
__device__ __forceinline__ void GemmPV(float (&o)[T::kOAcc], const uint32_t (&a)[T::kBlockN / 16][4],
                                       uint32_t v) {
  hopper::GemmRsNMajor<T::kBlockN, T::kHeadDim, T::kBf16>(o, a, v, T::kKvPanelBytes);
}

template <class T>
__device__ __forceinline__ void ScoresToA(const float (&s)[T::kSAcc],
                                          uint32_t (&a)[T::kBlockN / 16][4]) {
#pragma unroll
  for (int k = 0; k < T::kBlockN / 16; ++k)
    common::AccumToA<T::kSAcc, T::kBf16>(s, k, a[k]);
}

// Consumer schedules (measured in docs/kernels-hopper.md):
//  kSerial: per block, S = Q K^T, wait, mask + softmax, O += P V, wait. The two consumer
//    warpgroups drift into alternating on their own (one's softmax while the other's GEMMs run).
//  kOverlap: intra-warpgroup overlap (as FlashAttention-3): S_i = Q K_i^T and O += P_{i-1}
//    V_{i-1} are issued back to back, and the mask and softmax of S_i run while the tensor
//    cores still compute P_{i-1} V_{i-1}; only the rescale of O waits for that product.
//  kPingpong: kOverlap, and the two warpgroups take turns issuing their GEMMs (named barriers),
//    so one's softmax always meets the other's GEMMs.
// kSplitChunks (a flag on the schedule): heavy tiles' blocks are split over several CTAs and
// merged (hopper_split.cuh); built for the 64-row kernels (serial), where small grids run, as
// separate kernels, so the others keep their registers.
// kBf16Elems (a flag on the schedule): bf16 operands, the same kernel otherwise.
enum HopperSchedule { kSerial = 0, kOverlap = 1, kPingpong = 3, kSplitChunks = 4, kBf16Elems = 8 };

constexpr int kEpilogueBarrier = 1;  // + consumer: a warpgroup's own barrier (epilogue)
constexpr int kTurnBarrier = 3;      // + consumer: "your turn to issue GEMMs" (pingpong)

// Masks the scores of visited block i (key block `column`, ring position `cur`) for the
// thread's rows from `tile_row` (its column quad `t`): a part block's bitmap (staged with its V
// where it fits, T::kBitmapsInSmem: V is loaded right after K, so that wait rarely waits, and is
// paid once, the wait before P V then finding the phase complete; against the L2 read: 1.033x
// over the paper grid, 1.019x over the extended grid, docs/benchmarks.md, "Hopper kernel, step
// 9"), the keys outside the batch row's range `keys`, and the keys the row drops (key_bits).
template <class T>
__device__ __forceinline__ void MaskScores(float (&s)[T::kSAcc], const HopperSmem<T>& sm,
                                           const HopperAttentionParams& p,
                                           const HopperBlockList& list, int i, int column,
                                           int batch, const int2& keys, const HopperRingPos& cur,
                                           int tile_row, int t) {
  const int key0 = column * T::kBlockN;
  if (list.IsPart(i)) {
    if constexpr (T::kBitmapsInSmem) {
      hopper::BarrierWait(sm.VFull(cur.stage), cur.phase);
      ApplyBitmapMask(s, BitmapRows<T::kBlockN, true>(sm.Bitmap(cur.stage), tile_row, t));
    } else {
      ApplyBitmapMask(s, BitmapRows<T::kBlockN, false>(
                             list.template Bitmap<T::kBitmapWords>(p, i), tile_row, t));
    }
  }
  if (key0 < keys.x || key0 + T::kBlockN > keys.y)
    ApplyKeyWindow<T::kBlockN>(s, keys.x - key0, keys.y - key0, t);
  if (p.key_bits != nullptr)
    ApplyKeyBits<T::kBlockN>(s, p.key_bits + static_cast<size_t>(batch) * p.key_words + key0 / 64,
                             t);
}

// ConsumeTile's per-block steps (its lambdas, by reference: a copy reordered the kernel's PTX),
// handed to the block loops below: prefetch(i) loads block i + 1's column, scores(i, alpha)
// masks block i's scores and runs the online softmax, release(barrier) frees a ring slot,
// turn_begin / turn_end bracket a pingpong turn.
template <class Prefetch, class Scores, class Release, class TurnBegin, class TurnEnd>
struct ConsumerSteps {
  const Prefetch& prefetch;
  const Scores& scores;
  const Release& release;
  const TurnBegin& turn_begin;
  const TurnEnd& turn_end;
};
template <class P, class S, class R, class B, class E>
ConsumerSteps(const P&, const S&, const R&, const B&, const E&) -> ConsumerSteps<P, S, R, B, E>;

// The serial schedule's loop over a work item's n visited blocks (ring position `cur`): per
// block S = Q K^T, wait, mask + softmax, O += P V, wait.
template <class T, class Steps>
__device__ __forceinline__ void ConsumeBlocksSerial(const HopperSmem<T>& sm, int n,
                                                    uint32_t q_addr, HopperRingPos& cur,
                                                    float (&o)[T::kOAcc], float (&s)[T::kSAcc],
                                                    uint32_t (&pa)[T::kBlockN / 16][4],
                                                    const Steps& steps) {
  for (int i = 0; i < n; ++i, cur.Next<T::kStages>()) {
    hopper::BarrierWait(sm.KFull(cur.stage), cur.phase);
    GemmQK<T>(s, q_addr, hopper::SmemAddr(sm.K(cur.stage)));
    steps.prefetch(i);
    hopper::WgmmaWait<0>();
    hopper::FenceOperands(s);
    steps.release(sm.KEmpty(cur.stage));
    float alpha[2];
    steps.scores(i, alpha);
    common::ScaleRows(o, alpha);
    ScoresToA<T>(s, pa);
    hopper::BarrierWait(sm.VFull(cur.stage), cur.phase);
    GemmPV<T>(o, pa, hopper::SmemAddr(sm.V(cur.stage)));
    hopper::WgmmaWait<0>();
    hopper::FenceOperands(o);
    steps.release(sm.VEmpty(cur.stage));
  }
}

// The overlapped schedules' loop (kOverlap, kPingpong): S_i = Q K_i^T and O += P_{i-1} V_{i-1}
// issued back to back, block i's mask and softmax while P_{i-1} V_{i-1} still runs.
template <class T, class Steps>
__device__ __forceinline__ void ConsumeBlocksOverlapped(const HopperSmem<T>& sm, int n,
                                                        uint32_t q_addr, HopperRingPos& cur,
                                                        float (&o)[T::kOAcc],
                                                        float (&s)[T::kSAcc],
                                                        uint32_t (&pa)[T::kBlockN / 16][4],
                                                        const Steps& steps) {
  if (n > 0) {
    hopper::BarrierWait(sm.KFull(cur.stage), cur.phase);
    steps.turn_begin();
    GemmQK<T>(s, q_addr, hopper::SmemAddr(sm.K(cur.stage)));
    steps.turn_end();
    steps.prefetch(0);
    hopper::WgmmaWait<0>();
    hopper::FenceOperands(s);
    steps.release(sm.KEmpty(cur.stage));
    float alpha[2];
    steps.scores(0, alpha);  // o is still zero: nothing to rescale
    ScoresToA<T>(s, pa);
  }
  for (int i = 1; i < n; ++i) {
    const HopperRingPos prev = cur;  // block i - 1, whose P V is issued now
    cur.Next<T::kStages>();
    hopper::BarrierWait(sm.KFull(cur.stage), cur.phase);
    hopper::BarrierWait(sm.VFull(prev.stage), prev.phase);
    steps.turn_begin();
    GemmQK<T>(s, q_addr, hopper::SmemAddr(sm.K(cur.stage)));
    GemmPV<T>(o, pa, hopper::SmemAddr(sm.V(prev.stage)));
    steps.turn_end();
    steps.prefetch(i);
    hopper::WgmmaWait<1>();  // S_i is ready; P_{i-1} V_{i-1} may still run
    hopper::FenceOperands(s);
    steps.release(sm.KEmpty(cur.stage));
    float alpha[2];
    steps.scores(i, alpha);
    hopper::WgmmaWait<0>();
    hopper::FenceOperands(o);
    steps.release(sm.VEmpty(prev.stage));
    common::ScaleRows(o, alpha);
    ScoresToA<T>(s, pa);
  }
  if (n > 0) {
    hopper::BarrierWait(sm.VFull(cur.stage), cur.phase);
    steps.turn_begin();
    GemmPV<T>(o, pa, hopper::SmemAddr(sm.V(cur.stage)));
    steps.turn_end();
    hopper::WgmmaWait<0>();
    hopper::FenceOperands(o);
    steps.release(sm.VEmpty(cur.stage));
  }
}

// A work item's output, once its blocks are done: with a heavy tile's blocks split over
// several CTAs the last of its chunks to finish merges the others and stores, the rest are
// done (hopper_split.cuh); then normalised and stored through the item's Q slot `slot` (its
// GEMMs have completed; the slot is free for a later item once the TMA store has read it,
// while the producer has loaded the next item's Q into the other slot, where there are two).
// The chunk's numbers are read again from the work slot (still this item's until Q is
// released) rather than kept in registers through the loop.
template <class T, int kSchedule>
__device__ __forceinline__ void FinishTile(const HopperSmem<T>& sm, const CUtensorMap* o_map,
                                           const HopperAttentionParams& p,
                                           const HopperWorkItem& w, int consumer, int wg_row0,
                                           int slot, int thread_in_wg, int row, int t,
                                           float (&o)[T::kOAcc],
                                           common::FragmentSoftmax<T::kSAcc>& softmax) {
  bool store = true;
  if constexpr ((kSchedule & kSplitChunks) != 0) {
    const int piece = static_cast<const volatile HopperWorkItem*>(sm.Work(slot))->piece;
    // Warps whose 16 rows hold no query row (a decode tile holds a few heads' rows) leave no
    // partials: their rows are not stored.
    const int rows_here = QueryRowsOfTile<T::kBlockM>(p, w.tile) - wg_row0;
    if (piece != 0)
      store = CombineChunks<T>(p, o, softmax, w.tile, w.batch * p.heads + w.head, PieceChunk(piece),
                               PieceChunks(piece), PieceSlot(piece), consumer, thread_in_wg,
                               rows_here, sm.Q(slot) + wg_row0 * T::kRowBytes,
                               sm.SplitFlag(consumer), kEpilogueBarrier + consumer);
  }
  if (store) {
    float inv[2];
    softmax.Finish(inv);
    common::ScaleRows(o, inv);
    StoreOutputRows<T>(o, sm.Q(slot) + wg_row0 * T::kRowBytes, o_map, row, t, thread_in_wg,
                       kEpilogueBarrier + consumer,
                       RowCoords<T::kBlockM>(p, w.tile, w.head, wg_row0), w.batch);
  }
}

// One consumer warpgroup's whole job for one work item (a Q tile of one head), once q_full has
// announced it; `at` is where the CTA's pipeline stands when the item starts
// (hopper_pipeline.cuh).
template <class T, int kSchedule>
__device__ __forceinline__ void ConsumeTile(const HopperSmem<T>& sm, const CUtensorMap* o_map,
                                            const HopperAttentionParams& p,
                                            const HopperWorkItem& w, int consumer,
                                            const HopperPipelineState& at) {
  const HopperBlockList& list = w.list;
  constexpr bool kOverlapped = (kSchedule & kOverlap) != 0;
  constexpr bool kTurns = (kSchedule & kPingpong) == kPingpong && T::kConsumers == 2;
  const int thread_in_wg = static_cast<int>(threadIdx.x) % hopper::kWarpgroupThreads;
  const int warp_in_wg = thread_in_wg / 32;
  const int lane = thread_in_wg % 32;
  const int g = lane >> 2, t = lane & 3;
  const int wg_row0 = consumer * 64;               // first row of this warpgroup in the tile
  const int row = warp_in_wg * 16 + g;             // thread's first row within the warpgroup
  const int slot = at.QSlot();  // the item's Q slot, where its output is staged too
  const uint32_t q_addr = hopper::SmemAddr(sm.Q(slot)) + wg_row0 * T::kRowBytes;

  float o[T::kOAcc];
#pragma unroll
  for (int i = 0; i < T::kOAcc; ++i) o[i] = 0.f;
  float s[T::kSAcc];
#pragma unroll
  for (int i = 0; i < T::kSAcc; ++i) s[i] = 0.f;
  uint32_t pa[T::kBlockN / 16][4];
  common::FragmentSoftmax<T::kSAcc> softmax;
  // The next visited block's column loads while block i's S = Q K^T runs (after the GEMM's
  // commit, before its wait), so its L2 latency is off the path from the GEMM's end to the
  // softmax (the first block's comes with the work item). Where the bitmaps are not staged
  // in shared memory (64 x 128 at d 64), loading the part block's bitmap rows there too was
  // slower on bigbird B1 rows, so they load as the mask needs them (measured:
  // docs/benchmarks.md, "Hopper kernel, step 6").
  int column = w.first_column, next_column = 0;
  // The keys this item's batch row attends: [0, L_k), or its key range clipped to L_k.
  int2 keys = make_int2(0, p.seq_len);
  if (p.key_ranges != nullptr) {
    const int2 r = __ldg(reinterpret_cast<const int2*>(p.key_ranges) + w.batch);
    keys = make_int2(max(r.x, 0), min(r.y, p.seq_len));
  }
  const auto prefetch = [&](int i) {
    if (i + 1 < list.Count()) next_column = list.Column(p, i + 1);
  };
  HopperRingPos cur = at.ring;  // the ring position of visited block i (the loops step it)
  // Mask and softmax of the scores of visited block i (in s, ring position `cur`); alpha
  // rescales earlier rows.
  const auto scores = [&](int i, float (&alpha)[2]) {
    MaskScores<T>(s, sm, p, list, i, column, w.batch, keys, cur, wg_row0 + row, t);
    softmax.Update(s, p.scale_log2, alpha);
    column = next_column;
  };
  // Pingpong turns: both warpgroups visit the same blocks, so their turns pair up (the
  // second lets the first go first once per CTA, in the kernel).
  const auto turn_begin = [&] {
    if constexpr (kTurns) hopper::NamedBarrierSync(kTurnBarrier + consumer, 256);
  };
  const auto turn_end = [&] {
    if constexpr (kTurns) hopper::NamedBarrierArrive(kTurnBarrier + (1 - consumer), 256);
  };
  const auto release = [&](uint64_t* bar) {
    if (lane == 0) hopper::BarrierArrive(bar);
  };

  const ConsumerSteps steps{prefetch, scores, release, turn_begin, turn_end};
  const int n = list.Count();
  if constexpr (!kOverlapped) {
    ConsumeBlocksSerial<T>(sm, n, q_addr, cur, o, s, pa, steps);
  } else {
    ConsumeBlocksOverlapped<T>(sm, n, q_addr, cur, o, s, pa, steps);
  }
  FinishTile<T, kSchedule>(sm, o_map, p, w, consumer, wg_row0, slot, thread_in_wg, row, t, o,
                           softmax);
  // Warp 0's arrival comes after its lane 0 saw the store read the rows (StoreOutputRows).
  release(sm.QEmpty(slot));
}

template <int kHeadDim, int kBlockN, int kBlockM, int kSchedule>
// The split kernels run small grids (a wave of chunks), so they ask for their own traits' CTAs
// per SM (two below d 256): their merge then fits the registers (at the whole-tile kernel's
// count they spilled 24-64 bytes, ptxas).
__global__ void __launch_bounds__(HopperAttentionTraits<kHeadDim, kBlockN, kBlockM>::kThreads,
                                  HopperAttentionTraits<kHeadDim, kBlockN, kBlockM, false,
                                                        (kSchedule & kSplitChunks) != 0>::kCtasPerSm)
    HopperAttentionKernel(const __grid_constant__ CUtensorMap q_map,
                          const __grid_constant__ CUtensorMap k_map,
                          const __grid_constant__ CUtensorMap v_map,
                          const __grid_constant__ CUtensorMap o_map,
                          const HopperAttentionParams p) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using T = HopperAttentionTraits<kHeadDim, kBlockN, kBlockM, (kSchedule & kBf16Elems) != 0,
                                  (kSchedule & kSplitChunks) != 0>;
  extern __shared__ unsigned char smem_raw[];
  const HopperSmem<T> sm{reinterpret_cast<unsigned char*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t{1023})};

  // The producer resolves its first item (dependent global loads) while the barriers are
  // initialised.
  HopperWorkItem first{};
  constexpr bool kUnits = (kSchedule & kSplitChunks) != 0;
  if (threadIdx.x == T::kProducerThread) first = HopperWorkItem::Make<kUnits>(p, blockIdx.x);
  if (threadIdx.x == 0) sm.InitBarriers();
  __syncthreads();

  // CTA c starts with item c; on a persistent grid it then takes the next unstarted item
  // until none is left (hopper_scheduler.cuh). The producer resolves each item and announces
  // it to the consumers through q_full (AnnounceItem), on a persistent grid then the end; both
  // sides advance their pipeline states alike, so the rings' phases carry over from item to
  // item. On a full grid no end is announced: the consumers stop after their one item.
  const int warp = hopper::WarpIndexUniform();
  HopperPipelineState at;
  if (T::IsProducerWarp(warp)) {
    if constexpr (T::kWideProducer) hopper::SetMaxRegsDec<T::kProducerRegs>();
    if (threadIdx.x != T::kProducerThread) return;
    hopper::PrefetchTensorMap(&q_map);
    hopper::PrefetchTensorMap(&k_map);
    hopper::PrefetchTensorMap(&v_map);
    // Launched with programmatic dependent launch, the CTA got here while the previous kernel
    // on the stream may still run: everything above read only the layout lists and the
    // kernel parameters. Q, K, V, O and the work counter wait for that kernel. The consumers
    // start on q_full, after this wait.
    hopper::WaitPriorGrids();
    for (HopperWorkItem w = first; w.Valid(p);
         w = HopperWorkItem::Make<kUnits>(p, NextWorkItem(p))) {
      ProduceTile<T>(sm, &q_map, &k_map, &v_map, p, w, at);
      at.Advance<T>(w.list.Count());
    }
    // Every copy of this CTA is issued: the next kernel may start its set-up.
    hopper::LaunchDependentGrids();
    if (p.dynamic != 0) AnnounceItem<T>(sm, HopperWorkItem::End(p), p, at);
  } else {
    if constexpr (T::kWideProducer) hopper::SetMaxRegsInc<T::kConsumerRegs>();
    const int consumer = T::ConsumerOf(warp);
    if ((kSchedule & kPingpong) == kPingpong && T::kConsumers == 2 && consumer == 1)
      hopper::NamedBarrierArrive(kTurnBarrier, 256);
    // Launched early (programmatic dependent launch), the consumers sleep here rather than
    // poll q_full, so they take no issue slots from the previous kernel's last CTAs on the SM.
    hopper::WaitPriorGrids();
    do {
      hopper::BarrierWait(sm.QFull(at.QSlot()), at.QParity());
      const HopperWorkItem w = sm.Work(at.QSlot())->WarpUniform();
      if (!w.Valid(p)) break;
      ConsumeTile<T, kSchedule>(sm, &o_map, p, w, consumer, at);
      at.Advance<T>(w.list.Count());
    } while (p.dynamic != 0);
  }
#endif
}

template <int kHeadDim, int kBlockN, int kBlockM, bool kBf16>
engine::Status LaunchHopperAttentionVariant(const HopperAttentionParams& p,
                                            const HopperTensorMaps& maps, int device,
                                            void* stream) {
  using T = HopperAttentionTraits<kHeadDim, kBlockN, kBlockM, kBf16>;
  using TSplit = HopperAttentionTraits<kHeadDim, kBlockN, kBlockM, kBf16, T::kSplitBuilt>;
  constexpr int kE = kBf16 ? kBf16Elems : 0;  // the element flag of every kernel below
  // Pingpong by default: the fastest of the three on full and causal masks at d 64 and 128
  // (docs/kernels-hopper.md, "Consumer schedules"). STOF_HOPPER_SCHEDULE (0, 1, 3) picks another for
  // experiments; all three pass the GPU tests. With one consumer (BLOCK_M 64) pingpong is
  // overlap, and where the overlap does not fit the registers of kCtasPerSm CTAs (it spills:
  // kOverlapFitsRegisters) only the serial schedule is built.
  constexpr bool kOverlapBuilt = T::kOverlapBuilt;
  constexpr int kTurnsOrOverlap = T::kConsumers == 2 ? kPingpong : kOverlap;
  static const int schedule = [] {
    if (!kOverlapBuilt) return static_cast<int>(kSerial);
    const char* e = std::getenv("STOF_HOPPER_SCHEDULE");
    const int v = e ? std::atoi(e) : kTurnsOrOverlap;
    return v == kSerial || v == kOverlap ? v : kTurnsOrOverlap;
  }();
  // A split launch (p.units set by the host, which asked T::kSplitBuilt) runs the merging
  // kernel, any other launch one that does not merge: a capture once took the merging kernel
  // for a launch that had fallen back to whole tiles, and it wrote through a null workspace.
  const bool split = p.units != nullptr;
  HopperAttentionParams launch = p;
  auto* kernel = &HopperAttentionKernel<kHeadDim, kBlockN, kBlockM, kSerial | kE>;
  if constexpr (kOverlapBuilt) {
    if (schedule == kOverlap)
      kernel = &HopperAttentionKernel<kHeadDim, kBlockN, kBlockM, kOverlap | kE>;
    if (schedule == kTurnsOrOverlap)
      kernel = &HopperAttentionKernel<kHeadDim, kBlockN, kBlockM, kTurnsOrOverlap | kE>;
  }
  if constexpr (T::kSplitBuilt) {
    if (split)
      kernel = &HopperAttentionKernel<kHeadDim, kBlockN, kBlockM, kSerial | kSplitChunks | kE>;
  } else if (split) {
    return engine::MakeError("block-wise MHA (Hopper kernel): no split kernel for this tile");
  }
  const int variant = schedule | (split ? kSplitChunks : 0);  // caches below, per kernel
  // The split kernel's own shared-memory map (its deeper ring: TSplit).
  const size_t smem_bytes = split ? TSplit::kSmemBytes : T::kSmemBytes;
  // The opt-in dynamic shared memory is a per-device function attribute: set once per device.
  static std::atomic<uint64_t> configured[8] = {};
  const uint64_t bit = device < 64 ? uint64_t{1} << device : 0;
  if (bit == 0 || (configured[variant].load(std::memory_order_acquire) & bit) == 0) {
    STOF_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(smem_bytes)));
    configured[variant].fetch_or(bit, std::memory_order_release);
  }
  // A persistent grid: as many CTAs as fit on the GPU at once (occupancy of this kernel, once
  // per device), each taking items from the work counter until none is left.
  static std::atomic<int> resident[8][64] = {};
  int64_t slots = 0;  // 0: unknown (device index out of the table's range)
  if (device >= 0 && device < 64) {
    slots = resident[variant][device].load(std::memory_order_acquire);
    if (slots == 0) {
      int per_sm = 0, sms = 0;
      STOF_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, T::kThreads,
                                                                  smem_bytes));
      STOF_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
      slots = per_sm * sms > 0 ? per_sm * sms : 1;
      resident[variant][device].store(static_cast<int>(slots), std::memory_order_release);
    }
  }
  const int64_t items = launch.items;
  int64_t grid = items;
  if (p.max_ctas < 0 && slots > 0) {
    grid = items < slots ? items : slots;
  } else if (p.max_ctas > 0) {
    grid = items < p.max_ctas ? items : p.max_ctas;
  }
  launch.dynamic = grid < items ? 1 : 0;
  // Programmatic dependent launch: the CTAs may start while the previous kernel on the stream
  // finishes, and set up until they need its results (WaitPriorGrids). On by default (-1),
  // multi-wave grids too: there the CTAs take the slots the previous launch's last CTAs free
  // and resolve their first items during its tail; it pays only because the consumers sleep
  // in the wait rather than poll (measured: docs/kernels-hopper.md, "Starting before the
  // previous kernel ends").
  const bool dependent = p.dependent_launch != 0;
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(T::kThreads);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attribute[1] = {};
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = dependent ? 1 : 0;
  STOF_CUDA_TRY(cudaLaunchKernelEx(&config, kernel, maps.q, maps.k, maps.v, maps.o, launch));
  return engine::Status::Ok();
}

// The explicit instantiations of one variant (fp16 and bf16), for hopper_attention_d64.cu,
// _d128.cu and _d256.cu.
#define STOF_HOPPER_VARIANT(D, BN, BM)                                                       \
  template engine::Status LaunchHopperAttentionVariant<D, BN, BM, false>(                    \
      const HopperAttentionParams&, const HopperTensorMaps&, int, void*);                    \
  template engine::Status LaunchHopperAttentionVariant<D, BN, BM, true>(                     \
      const HopperAttentionParams&, const HopperTensorMaps&, int, void*)

}  // namespace stof::kernels::detail
