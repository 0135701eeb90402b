// BatchForm: how a GEMM call's kernel finds its matrices. Each form is a build of its own
// (TGEMM_BATCH in kernel_templates/common/batch.cuh), so a single GEMM runs the code it ran
// before batches existed, and only batched calls pay for finding their member.
#pragma once

namespace tgemm {

enum class BatchForm {
  single = 0,    // one GEMM: a, b and c are its matrices
  strided = 1,   // member i at a + i * stride_a, b + i * stride_b, c + i * stride_c
  pointers = 2,  // a, b and c are device arrays of the members' pointers
  // groups of problems of their own shapes (cuBLAS's grouped batched GEMM): a, b and c are
  // device arrays of every problem's pointers, the shapes a table (common/group_table.h)
  grouped = 3,
};

}  // namespace tgemm
