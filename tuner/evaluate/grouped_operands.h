// GroupedOperands: a grouped GEMM's operands on the GPU (tgemm-bench, the GPU tests): every
// problem's A, B and C one after another per operand, random values in [-1, 1) rounded to their
// types (C too, for calls with beta), and the device arrays of pointers a grouped call reads.
#pragma once

#include <cstdint>
#include <vector>

#include "src/core/gemm_call.h"
#include "src/core/grouped_call.h"
#include "src/core/problem.h"
#include "src/cuda/device_buffer.h"

namespace tgemm {

class GroupedOperands {
 public:
  // One problem: its group, shape, leading dimensions and where its matrices begin (elements).
  struct Member {
    size_t group;
    int m, n, k;
    int lda, ldb, ldc;
    int64_t a, b, c;
  };

  // The operands of `problem` (Problem::groups, its layout and types; groups may be empty), rows
  // `padding` elements longer than the matrices' (0: packed), on the current device.
  GroupedOperands(const Problem& problem, uint64_t seed, int padding = 0);

  // The grouped call on these operands, every group with these scalars.
  GroupedGemmCall call(float alpha, float beta) const;
  // Member i as one GEMM on these A and B, its C at the member's offset in `c` (of `c_type`).
  GemmCall member_call(size_t i, void* c, DType c_type, float alpha, float beta) const;

  const std::vector<Member>& members() const { return members_; }
  // The values A, B and C were given, as f32 (rounded to their types).
  const std::vector<float>& a_values() const { return a_values_; }
  const std::vector<float>& b_values() const { return b_values_; }
  const std::vector<float>& c_values() const { return c_values_; }
  // C back to its first values; C as the device holds it now, as f32 (poison stays poison).
  void reset_c() const;
  std::vector<float> c_on_host() const;
  const DeviceBuffer& c() const { return c_; }

 private:
  Problem problem_;
  std::vector<CallGroup> groups_;  // the call's groups, alpha 1 and beta 0
  std::vector<Member> members_;
  std::vector<float> a_values_, b_values_, c_values_;
  DeviceBuffer a_, b_, c_, c_initial_, pointers_;  // pointers_: A's, then B's, then C's
};

}  // namespace tgemm
