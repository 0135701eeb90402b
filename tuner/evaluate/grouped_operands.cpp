#include "tuner/evaluate/grouped_operands.h"

#include <algorithm>
#include <random>

#include "src/cuda/cuda_check.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {

namespace {

// `values.size()` elements of `type` on the GPU.
DeviceBuffer upload(DType type, const std::vector<float>& values) {
  const std::vector<unsigned char> bytes = to_bytes(type, values);
  DeviceBuffer buffer(bytes.size());
  if (!bytes.empty())
    TGEMM_CUDA_CHECK(cudaMemcpy(buffer.get(), bytes.data(), bytes.size(), cudaMemcpyDefault));
  return buffer;
}

std::vector<float> random_values(DType type, int64_t elements, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> values(static_cast<size_t>(elements));
  for (float& x : values) x = round_to(type, dist(rng));
  return values;
}

}  // namespace

GroupedOperands::GroupedOperands(const Problem& problem, uint64_t seed, int padding)
    : problem_(problem) {
  int64_t a = 0, b = 0, c = 0;
  for (size_t g = 0; g < problem.groups.size(); ++g) {
    const ProblemGroup& group = problem.groups[g];
    const Problem shape =
        Problem::packed(problem.types, problem.op_a, problem.op_b, group.m, group.n, group.k);
    // Leading dimensions cover a row even where a matrix is empty (cuBLAS's rule).
    const auto ld = [&](int64_t cols) { return int(std::max<int64_t>(cols, 1) + padding); };
    groups_.push_back({problem.op_a, problem.op_b, int(group.m), int(group.n), int(group.k), 1.0f,
                       0.0f, ld(shape.a_cols()), ld(shape.b_cols()), ld(group.n),
                       int(group.count)});
    const CallGroup& x = groups_.back();
    for (int64_t i = 0; i < group.count; ++i) {
      members_.push_back({g, x.m, x.n, x.k, x.lda, x.ldb, x.ldc, a, b, c});
      a += shape.a_rows() * x.lda;
      b += shape.b_rows() * x.ldb;
      c += group.m * x.ldc;
    }
  }
  std::mt19937_64 rng(seed);
  a_values_ = random_values(problem.types.a, a, rng);
  b_values_ = random_values(problem.types.b, b, rng);
  c_values_ = random_values(problem.types.c, c, rng);
  a_ = upload(problem.types.a, a_values_);
  b_ = upload(problem.types.b, b_values_);
  c_initial_ = upload(problem.types.c, c_values_);
  c_ = DeviceBuffer(c_initial_.bytes());
  reset_c();
  const size_t count = members_.size();
  std::vector<const void*> pointers(3 * count);
  for (size_t i = 0; i < count; ++i) {
    const Member& x = members_[i];
    pointers[i] = a_.get<char>() + x.a * element_bytes(problem.types.a);
    pointers[count + i] = b_.get<char>() + x.b * element_bytes(problem.types.b);
    pointers[2 * count + i] = c_.get<char>() + x.c * element_bytes(problem.types.c);
  }
  pointers_ = DeviceBuffer(pointers.size() * sizeof(void*));
  if (count > 0)
    TGEMM_CUDA_CHECK(
        cudaMemcpy(pointers_.get(), pointers.data(), pointers_.bytes(), cudaMemcpyDefault));
}

GroupedGemmCall GroupedOperands::call(float alpha, float beta) const {
  GroupedGemmCall call;
  call.types = problem_.types;
  call.groups = groups_;
  for (CallGroup& g : call.groups) {
    g.alpha = alpha;
    g.beta = beta;
  }
  const size_t count = members_.size();
  void** arrays = pointers_.get<void*>();
  call.a = arrays;
  call.b = arrays + count;
  call.c = arrays + 2 * count;
  return call;
}

GemmCall GroupedOperands::member_call(size_t i, void* c, DType c_type, float alpha,
                                      float beta) const {
  const Member& x = members_[i];
  GemmCall call;
  call.op_a = problem_.op_a;
  call.op_b = problem_.op_b;
  call.m = x.m;
  call.n = x.n;
  call.k = x.k;
  call.alpha = alpha;
  call.beta = beta;
  call.a = a_.get<char>() + x.a * element_bytes(problem_.types.a);
  call.lda = x.lda;
  call.b = b_.get<char>() + x.b * element_bytes(problem_.types.b);
  call.ldb = x.ldb;
  call.c = static_cast<char*>(c) + x.c * element_bytes(c_type);
  call.ldc = x.ldc;
  call.types = problem_.types;
  return call;
}

void GroupedOperands::reset_c() const {
  if (c_.bytes() > 0)
    TGEMM_CUDA_CHECK(cudaMemcpy(c_.get(), c_initial_.get(), c_.bytes(), cudaMemcpyDefault));
}

std::vector<float> GroupedOperands::c_on_host() const {
  std::vector<unsigned char> bytes(c_.bytes());
  if (!bytes.empty())
    TGEMM_CUDA_CHECK(cudaMemcpy(bytes.data(), c_.get(), bytes.size(), cudaMemcpyDefault));
  return from_bytes(problem_.types.c, bytes);
}

}  // namespace tgemm
