// The portable block-wise kernel's supported set, preferred set and check
// (block_sparse_rules.h).
#include "engine/select/block_sparse_rules.h"

#include <initializer_list>
#include <string>

#include "engine/core/text_format.h"

namespace stof::engine {

namespace {

constexpr int64_t kSizes[] = {16, 32, 64, 128};
constexpr int64_t kWarps[] = {1, 2, 4, 8};

bool IsOneOf(int64_t v, std::initializer_list<int64_t> allowed) {
  for (int64_t a : allowed)
    if (v == a) return true;
  return false;
}

bool Fits(int64_t head_dim, int64_t bm, int64_t bn, int64_t warps, int64_t smem_limit_bytes) {
  const size_t smem = BlockSparseSmemBytes(head_dim, bm, bn, warps);
  return smem > 0 && static_cast<int64_t>(smem) <= smem_limit_bytes;
}

}  // namespace

int64_t BlockSparseRowsPerWarp(int64_t head_dim, int64_t block_m, int64_t block_n,
                               int64_t num_warps) {
  if (!IsOneOf(head_dim, {64, 128}) || !IsOneOf(block_m, {16, 32, 64, 128}) ||
      !IsOneOf(block_n, {16, 32, 64, 128}) || !IsOneOf(num_warps, {1, 2, 4, 8})) {
    return 0;
  }
  if (num_warps >= block_m / 16) return 16;
  if (head_dim == 64 && block_n <= 64 && num_warps == block_m / 32) return 32;
  return 0;
}

size_t BlockSparseSmemBytes(int64_t head_dim, int64_t block_m, int64_t block_n,
                            int64_t num_warps) {
  const int64_t rows = BlockSparseRowsPerWarp(head_dim, block_m, block_n, num_warps);
  if (rows == 0) return 0;
  const int64_t split = num_warps / (block_m / rows);
  return BlockSparseSmemBytesFor(static_cast<int>(head_dim), static_cast<int>(block_m),
                                 static_cast<int>(block_n), static_cast<int>(split));
}

bool IsPreferredBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                  int64_t num_warps, int64_t smem_limit_bytes) {
  return block_m >= 64 && block_n >= 64 && num_warps == block_m / 16 &&
         CheckPortableBlockSparseConfig(head_dim, block_m, block_n, num_warps, smem_limit_bytes)
             .IsOk();
}

std::vector<MhaConfig> PortableBlockSparseConfigs(int64_t head_dim, int64_t smem_limit_bytes) {
  std::vector<MhaConfig> out;
  for (int64_t bm : kSizes)
    for (int64_t bn : kSizes)
      for (int64_t w : kWarps)
        if (Fits(head_dim, bm, bn, w, smem_limit_bytes))
          out.push_back(MhaConfig{MhaKernel::kBlockWise, bm, bn, w});
  return out;
}

std::string DescribeSupportedBlockSparseConfigs(int64_t head_dim, int64_t smem_limit_bytes) {
  if (!IsOneOf(head_dim, {64, 128})) return "none (head_dim must be 64 or 128)";
  std::string s;
  for (int64_t bm : kSizes) {
    for (int64_t w : kWarps) {
      std::string bns;
      for (int64_t bn : kSizes) {
        if (!Fits(head_dim, bm, bn, w, smem_limit_bytes)) continue;
        if (!bns.empty()) bns += ',';
        bns += Str(bn);
      }
      if (bns.empty()) continue;
      if (!s.empty()) s += "; ";
      s.append(Str(bm)).append("x{").append(bns).append("} warps ").append(Str(w));
    }
  }
  return s.empty() ? "none" : s;
}

Status CheckPortableBlockSparseConfig(int64_t head_dim, int64_t block_m, int64_t block_n,
                                      int64_t num_warps, int64_t smem_limit_bytes) {
  // Runs on every launch: the rule checks are integer compares, and the message (with the
  // supported list, which checks every combination) is built only when one fails.
  std::string rule;
  if (!IsOneOf(head_dim, {64, 128})) {
    rule = "head_dim must be 64 or 128";
  } else if (!IsOneOf(block_m, {16, 32, 64, 128})) {
    rule = "BLOCK_M must be one of 16, 32, 64, 128";
  } else if (!IsOneOf(block_n, {16, 32, 64, 128})) {
    rule = "BLOCK_N must be one of 16, 32, 64, 128";
  } else if (!IsOneOf(num_warps, {1, 2, 4, 8})) {
    rule = "num_warps must be one of 1, 2, 4, 8";
  } else if (BlockSparseRowsPerWarp(head_dim, block_m, block_n, num_warps) == 0) {
    rule = "num_warps must be at least BLOCK_M / 16 = " + Str(block_m / 16) +
           " (each warp owns 16 query rows), or exactly BLOCK_M / 32 with head_dim 64 and "
           "BLOCK_N <= 64 (each warp owns 32 rows)";
  } else if (const size_t smem = BlockSparseSmemBytes(head_dim, block_m, block_n, num_warps);
             static_cast<int64_t>(smem) > smem_limit_bytes) {
    rule = "needs " + Str(static_cast<int64_t>(smem)) + " bytes of shared memory, the limit is " +
           Str(smem_limit_bytes);
  }
  if (rule.empty()) return Status::Ok();
  std::string message = "block-wise MHA: unsupported BLOCK_M " + Str(block_m) + ", BLOCK_N " +
                        Str(block_n) + ", num_warps " + Str(num_warps) + ", head_dim " +
                        Str(head_dim) + ": " + rule;
  if (IsOneOf(head_dim, {64, 128})) {
    message += " (supported at head_dim " + Str(head_dim) + " with " + Str(smem_limit_bytes) +
               " bytes of shared memory per block, as BLOCK_MxBLOCK_N warps: " +
               DescribeSupportedBlockSparseConfigs(head_dim, smem_limit_bytes) +
               "; on sm_90 GPUs also the Hopper kernel: 128x{64,128} warps 12, 64x64 warps 5)";
  }
  return MakeError(message);
}

}  // namespace stof::engine
