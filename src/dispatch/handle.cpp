// tgemm::Handle, the C++ face of the Dispatcher.
#include "src/dispatch/dispatcher.h"
#include "tgemm/tgemm.h"

namespace tgemm {

namespace {

Op to_op(char op, const char* name) {
  if (op == 'N' || op == 'n') return Op::N;
  if (op == 'T' || op == 't') return Op::T;
  throw InvalidValueError(std::string(name) + " must be 'N' or 'T'");
}

GemmCall make_call(char op_a, char op_b, int m, int n, int k, const float* a, int lda,
                   const float* b, int ldb, float* c, int ldc) {
  return GemmCall{
      to_op(op_a, "op_a"), to_op(op_b, "op_b"), m, n, k, 1.0f, 0.0f, a, lda, b, ldb, c, ldc};
}

}  // namespace

Handle::Handle(const std::string& db_path)
    : dispatcher_(std::make_unique<Dispatcher>(DispatcherOptions{db_path, {}, true})) {}
Handle::~Handle() = default;
Handle::Handle(Handle&&) noexcept = default;
Handle& Handle::operator=(Handle&&) noexcept = default;

void Handle::sgemm(char op_a, char op_b, int m, int n, int k, float alpha, const float* a, int lda,
                   const float* b, int ldb, float beta, float* c, int ldc, cudaStream_t stream) {
  GemmCall call = make_call(op_a, op_b, m, n, k, a, lda, b, ldb, c, ldc);
  call.alpha = alpha;
  call.beta = beta;
  dispatcher_->sgemm(call, stream);
}

Selection Handle::selection(char op_a, char op_b, int m, int n, int k, const float* a, int lda,
                            const float* b, int ldb, float* c, int ldc) {
  return dispatcher_->selection(make_call(op_a, op_b, m, n, k, a, lda, b, ldb, c, ldc));
}

void Handle::set_cublas_fallback(bool enabled) { dispatcher_->set_cublas_fallback(enabled); }

}  // namespace tgemm
