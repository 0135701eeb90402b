#include "src/core/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <tuple>
#include <utility>

#include "src/core/error.h"

namespace tgemm {

namespace {
// The kernels index m, n, k and the leading dimensions with 32-bit ints (GemmParams, the
// C API); 2^31 would wrap.
constexpr int64_t kMaxDim = INT32_MAX;
}  // namespace

int alignment_bytes(int64_t ld, uintptr_t address, int element_bytes, int64_t stride) {
  for (int bytes : {16, 8, 4, 2}) {
    if (bytes <= element_bytes) break;
    if ((ld * element_bytes) % bytes == 0 && address % uintptr_t(bytes) == 0 &&
        (stride * element_bytes) % bytes == 0)
      return bytes;
  }
  return element_bytes;
}

Problem Problem::packed(GemmTypes types, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k) {
  Problem p;
  p.types = types;
  p.op_a = op_a;
  p.op_b = op_b;
  p.m = m;
  p.n = n;
  p.k = k;
  p.lda = p.a_cols();
  p.ldb = p.b_cols();
  p.ldc = n;
  p.align_a = alignment_bytes(p.lda, 0, element_bytes(types.a));
  p.align_b = alignment_bytes(p.ldb, 0, element_bytes(types.b));
  p.align_c = alignment_bytes(p.ldc, 0, element_bytes(types.c));
  return p;
}

Problem Problem::packed_batch(GemmTypes types, Op op_a, Op op_b, int64_t m, int64_t n, int64_t k,
                              int64_t batch) {
  Problem p = packed(types, op_a, op_b, m, n, k);
  p.batch = batch;
  if (batch > 1) {
    p.stride_a = p.a_span();
    p.stride_b = p.b_span();
    p.stride_c = p.c_span();
    p.set_alignment(0, 0, 0);
  }
  return p;
}

namespace {

// The bucket of a grouped GEMM's size: rounded up to three significant bits (a multiple of an
// eighth of the power of two at or above it), at most the kernels' limit.
int64_t bucket_of(int64_t v) {
  const int64_t step = std::max<int64_t>(
      1, int64_t(std::bit_ceil(uint64_t(std::clamp<int64_t>(v, 1, kMaxDim)))) / 8);
  return std::min((std::max<int64_t>(v, 1) + step - 1) / step * step, kMaxDim);
}

// A group's multiply-adds over its problems (K = 0 still writes C: counted as one).
double group_work(const ProblemGroup& g) {
  return double(g.m) * double(g.n) * double(std::max<int64_t>(g.k, 1)) * double(g.count);
}

}  // namespace

Problem Problem::grouped(GemmTypes types, Op op_a, Op op_b, std::vector<ProblemGroup> groups) {
  const ProblemGroup* heaviest = nullptr;
  int64_t problems = 0;
  for (const ProblemGroup& g : groups) {
    problems += g.count;
    if (g.m > 0 && g.n > 0 && g.count > 0 && (!heaviest || group_work(g) > group_work(*heaviest)))
      heaviest = &g;
  }
  if (!heaviest) fail("a grouped GEMM needs a group with work (m, n and count above 0)");
  Problem p = packed(types, op_a, op_b, bucket_of(heaviest->m), bucket_of(heaviest->n),
                     bucket_of(heaviest->k));
  p.batch = bucket_of(problems);
  p.groups = std::move(groups);
  p.align_a = element_bytes(types.a);
  p.align_b = element_bytes(types.b);
  p.align_c = element_bytes(types.c);
  return p;
}

void Problem::set_alignment(uintptr_t a, uintptr_t b, uintptr_t c) {
  align_a = alignment_bytes(lda, a, element_bytes(types.a), stride_a);
  align_b = alignment_bytes(ldb, b, element_bytes(types.b), stride_b);
  align_c = alignment_bytes(ldc, c, element_bytes(types.c), stride_c);
}

std::string Problem::layout() const { return to_string(op_a) + to_string(op_b); }

std::string Problem::functional_key() const {
  const char* form = batch_form() == BatchForm::grouped    ? "g"
                     : batch_form() == BatchForm::pointers ? "p"
                                                           : "";
  const std::string members =
      batch_form() == BatchForm::single ? "" : fmt::format("_x{}{}", batch, form);
  const std::string applied = epilogue.any() ? "_e" + epilogue.name() : "";
  return fmt::format("{}_{}_m{}_n{}_k{}{}_b{}{}", types.name(), layout(), m, n, k, members,
                     beta_zero ? 0 : 1, applied);
}

std::string Problem::key() const {
  return fmt::format("{}_a{}.{}.{}", functional_key(), align_a, align_b, align_c);
}

double Problem::flops() const {
  if (groups.empty()) return 2.0 * double(m) * double(n) * double(k) * double(batch);
  double sum = 0;
  for (const ProblemGroup& g : groups)
    sum += 2.0 * double(g.m) * double(g.n) * double(g.k) * double(g.count);
  return sum;
}

double Problem::min_bytes() const {
  const double ea = element_bytes(types.a), eb = element_bytes(types.b);
  const double ec = element_bytes(types.c);
  if (!groups.empty()) {
    double sum = 0;
    for (const ProblemGroup& g : groups)
      sum += double(g.count) * (double(g.m) * double(g.k) * ea + double(g.k) * double(g.n) * eb +
                                double(g.m) * double(g.n) * ec * (beta_zero ? 1.0 : 2.0));
    return sum;
  }
  const double c_bytes = double(m) * double(n) * ec * (beta_zero ? 1.0 : 2.0);
  const double bias_bytes =
      epilogue.bias == BiasAlong::none
          ? 0.0
          : double(epilogue.bias == BiasAlong::n ? n : m) * (epilogue.bias_f32 ? 4.0 : ec);
  const double aux_bytes = epilogue.aux ? double(m) * double(n) * ec : 0.0;
  return double(batch) * (double(m) * double(k) * ea + double(k) * double(n) * eb + c_bytes) +
         bias_bytes + aux_bytes;
}

void Problem::validate() const {
  if (std::string why = types.invalid_reason(); !why.empty())
    fail("types {}: {}", types.name(), why);
  auto check_int = [](const char* name, int64_t v) {
    if (v > kMaxDim)
      fail("{} = {} is too large: the kernels index it with a 32-bit int (at most {})", name, v,
           kMaxDim);
  };
  for (auto [name, v] : {std::pair{"m", m}, {"n", n}, {"k", k}}) {
    if (v < 1) fail("{} must be >= 1, got {}", name, v);
    check_int(name, v);
  }
  if (lda < a_cols()) fail("lda = {} is smaller than the row length of A ({})", lda, a_cols());
  if (ldb < b_cols()) fail("ldb = {} is smaller than the row length of B ({})", ldb, b_cols());
  if (ldc < n) fail("ldc = {} is smaller than the row length of C ({})", ldc, n);
  check_int("lda", lda);
  check_int("ldb", ldb);
  check_int("ldc", ldc);
  for (auto [name, align, type] : {std::tuple{"align_a", align_a, types.a},
                                   {"align_b", align_b, types.b},
                                   {"align_c", align_c, types.c}}) {
    const int e = element_bytes(type);
    if (align < e || align > 16 || (align & (align - 1)) != 0)
      fail("{} must be a power of two from {} to 16 bytes, got {}", name, e, align);
  }
  validate_batch();
  if (std::string why = epilogue.invalid_reason(types); !why.empty())
    fail("epilogue {}: {}", epilogue.kind(), why);
  if (epilogue.any() && batched())
    fail("epilogue {} on a batch of {}: an epilogue applies to one GEMM (batch 1)", epilogue.kind(),
         batch);
}

void Problem::validate_batch() const {
  if (!groups.empty()) return validate_groups();
  if (batch < 1) fail("batch must be >= 1, got {}", batch);
  if (batch > kMaxBatch)
    fail("batch = {} is too large: the kernels launch one grid layer per member (at most {})",
         batch, kMaxBatch);
  if (batch == 1 || batch_pointers) {
    for (auto [name, stride] :
         {std::pair{"stride_a", stride_a}, {"stride_b", stride_b}, {"stride_c", stride_c}})
      if (stride != 0)
        fail("{} = {} given for {}: strides apply to a strided batch of more than one", name,
             stride, batch_pointers ? "pointer arrays" : "batch 1");
    return;
  }
  // Members of C may not overlap (each is written); A's and B's may (cuBLAS allows a stride
  // of 0 to share one operand across the batch), but not run backwards.
  if (stride_c < c_span())
    fail(
        "stride_c = {} is smaller than one member of C ({} elements with ldc = {}): members "
        "of C would overlap",
        stride_c, c_span(), ldc);
  for (auto [name, stride] : {std::pair{"stride_a", stride_a}, {"stride_b", stride_b}})
    if (stride < 0) fail("{} must be >= 0, got {}", name, stride);
}

// Shape files give each group's sizes (>= 1, as any problem's) and count; the rest follows
// from them (grouped()), so a problem edited past that is caught here.
void Problem::validate_groups() const {
  int64_t problems = 0;
  for (size_t i = 0; i < groups.size(); ++i) {
    const ProblemGroup& g = groups[i];
    for (auto [name, v] : {std::pair{"m", g.m}, {"n", g.n}, {"k", g.k}, {"count", g.count}}) {
      if (v < 1) fail("group {}: {} must be >= 1, got {}", i, name, v);
      if (v > kMaxDim)
        fail("group {}: {} = {} is too large: the kernels index it with a 32-bit int (at most {})",
             i, name, v, kMaxDim);
    }
    problems += g.count;
  }
  if (problems > kMaxGroupedProblems)
    fail(
        "a grouped GEMM of {} problems: its pointer arrays are indexed with 32-bit ints (at most "
        "{} problems)",
        problems, kMaxGroupedProblems);
  const Problem expected = grouped(types, op_a, op_b, groups);
  if (m != expected.m || n != expected.n || k != expected.k || batch != expected.batch ||
      batch_pointers || stride_a != 0 || stride_b != 0 || stride_c != 0)
    fail("a grouped GEMM's shape {}x{}x{} of {} problems is not its groups' ({}x{}x{} of {})", m, n,
         k, batch, expected.m, expected.n, expected.k, expected.batch);
}

}  // namespace tgemm
