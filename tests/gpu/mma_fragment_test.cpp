// GPU: the tensor-core fragment helpers of the block-wise kernel (kernels/common/mma_sync.cuh) on
// single 16 x 16 x 16 products against the CPU, so a fragment-layout or ldmatrix-addressing error
// shows up here, by position, rather than as a wrong attention output. Small integers keep every
// product and sum exact in fp16 and fp32, so the comparison is exact.
#include <cstdio>
#include <string>
#include <vector>

#include "gpu_test_util.h"
#include "kernels/attention/mma_self_test.h"

namespace {

using Matrix = std::vector<float>;  // 16 x 16 row-major

Matrix MatMul(const Matrix& a, const Matrix& b) {
  Matrix c(256, 0.f);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      double s = 0;
      for (int k = 0; k < 16; ++k) s += double{a[i * 16 + k]} * b[k * 16 + j];
      c[i * 16 + j] = static_cast<float>(s);
    }
  return c;
}

// Reports the first few mismatching positions with row and column, which point straight at
// the fragment slot that is wrong.
void ExpectSame(const Matrix& got, const Matrix& want, const std::string& what) {
  int bad = 0;
  for (int i = 0; i < 256; ++i) {
    if (got[i] != want[i] && bad++ < 8) {
      ADD_FAILURE() << what << ": element (" << i / 16 << ", " << i % 16 << ") = " << got[i]
                    << ", expected " << want[i];
    }
  }
  EXPECT_EQ(bad, 0) << what << ": " << bad << " of 256 elements differ";
}

void RunCase(const Matrix& a, const Matrix& b, const std::string& name) {
  Matrix c_nk(256), c_kn(256), c_pv(256);
  auto st =
      stof::kernels::RunMmaSelfTest(a.data(), b.data(), c_nk.data(), c_kn.data(), c_pv.data());
  ASSERT_TRUE(st.IsOk()) << st.Message();
  const Matrix ab = MatMul(a, b);
  ExpectSame(c_nk, ab, name + ": A*B via B^T [n][k] (K-tile path)");
  ExpectSame(c_kn, ab, name + ": A*B via B [k][n] + ldmatrix.trans (V-tile path)");
  ExpectSame(c_pv, MatMul(ab, b), name + ": (A*B)*B with accumulators as A (P-in-registers path)");
}

}  // namespace

// Distinct values per position make any swapped row, column or half visible.
TEST(GpuMmaFragments, PositionCodedMatrices) {
  STOF_REQUIRE_GPU();
  Matrix a(256), b(256);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      a[i * 16 + j] = static_cast<float>((i * 7 + j * 3) % 11 - 5);  // -5..5
      b[i * 16 + j] = static_cast<float>((i * 5 + j * 13) % 7 - 3);  // -3..3
    }
  // |A*B| <= 16 * 15 = 240 and |(A*B)*B| <= 16 * 240 * 3: integers, exact in fp16 / fp32.
  RunCase(a, b, "position-coded");
}

// Identity and permutation-like operands: the output is a copy of one input, so a wrong
// fragment slot shows as a misplaced value.
TEST(GpuMmaFragments, IdentityAndUnitMatrices) {
  STOF_REQUIRE_GPU();
  Matrix id(256, 0.f), coded(256);
  for (int i = 0; i < 16; ++i) id[i * 17] = 1.f;
  for (int i = 0; i < 256; ++i) coded[i] = static_cast<float>(i % 64 - 32);  // exact in fp16
  RunCase(id, coded, "I * X");
  RunCase(coded, id, "X * I");
  // A single 1 at (r, k) of A and (k, c) of B: only C[r][c] is non-zero.
  for (int r : {0, 7, 8, 15}) {
    for (int c : {0, 1, 8, 14}) {
      Matrix a(256, 0.f), b(256, 0.f);
      a[r * 16 + 9] = 2.f;
      b[9 * 16 + c] = 3.f;
      RunCase(a, b, "unit (" + std::to_string(r) + ", " + std::to_string(c) + ")");
    }
  }
}
