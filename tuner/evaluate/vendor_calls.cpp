#include "tuner/evaluate/vendor_calls.h"

#include <utility>
#include <vector>

#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "src/cuda/cuda_check.h"

namespace tgemm {

namespace {

// cuBLASLt's heuristic algorithms timed per problem, its best first (PyTorch TunableOp times
// the heuristic's list the same way), each within kLtWorkspaceBytes.
constexpr int kLtAlgorithms = 4;

// The calls racing on a problem, cuBLAS's first: one launcher, one trial and one verdict each.
struct Race {
  std::vector<Launcher> launchers;
  std::vector<TrialResult> trials;
  std::vector<bool> verified;
};

// cuBLASLt's top heuristic algorithms for `call`, run with `workspace` on `stream`: each it can
// run joins the race (its algorithm kept in `ready`, which the launchers point into), each it
// cannot is an invalid trial in out->vendor_trials.
void add_lt_contenders(const LtGemm& lt, const GemmCall& call, void* workspace, cudaStream_t stream,
                       std::vector<LtReadyAlgo>* ready, Race* race, CublasTiming* out) {
  for (const LtAlgoConfig& algo : lt.heuristic(kLtAlgorithms, kLtWorkspaceBytes)) {
    TrialResult r;
    r.config = cublaslt_call(algo);
    std::string why;
    if (auto one = lt.ready(algo, &why)) {
      ready->push_back(*one);
    } else {
      r.status = TrialStatus::invalid;
      r.error = why;
      out->vendor_trials.push_back(r);
      continue;
    }
    race->trials.push_back(r);
    race->launchers.push_back(
        [&lt, algo = &ready->back(), call, workspace, stream]() -> std::string {
          const cublasStatus_t status = lt.run(*algo, call, workspace, stream);
          if (status == CUBLAS_STATUS_SUCCESS) return {};
          return fmt::format("cublasLtMatmul: {}", cublasGetStatusString(status));
        });
  }
}

// Each call of the race verified once on a poisoned C: the indices of those to time (cuBLAS's
// whatever its verdict, the others where right) and in `estimate_ms` one round of them. Throws
// Error when cuBLAS's call fails other than by a wrong result.
std::vector<size_t> verify_race(const RunVerifier& verify, Race* race, double* estimate_ms) {
  std::vector<size_t> timed;
  race->verified.assign(race->launchers.size(), false);
  for (size_t i = 0; i < race->launchers.size(); ++i) {
    double ms = 0;
    race->verified[i] = verify(race->launchers[i], &race->trials[i], &ms);
    if (!race->verified[i] && i == 0 && race->trials[0].status != TrialStatus::wrong_result)
      fail("{}", race->trials[0].error);
    if (!race->verified[i] && i > 0) continue;
    *estimate_ms += ms;
    timed.push_back(i);
  }
  return timed;
}

}  // namespace

VendorCalls::VendorCalls(cudaStream_t stream) : stream_(stream) {
  const cublasStatus_t status = cublasSetStream(cublas_.get(), stream_);
  if (status != CUBLAS_STATUS_SUCCESS)
    fail("cublasSetStream failed: {}", cublasGetStatusString(status));
}

cublasLtHandle_t VendorCalls::lt() {
  if (!lt_) lt_ = std::make_unique<CublasLtHandle>();
  return lt_->get();
}

std::string VendorCalls::run_cublas(const PreparedProblem& p) const {
  if (std::string error = p.cublas_gemm(cublas(), CublasMath::matching, p.c()); !error.empty())
    return error;
  if (!p.pass()) return {};
  const cudaError_t err =
      p.pass()->launch(p.problem().m, p.problem().n, p.epilogue_params(p.c(), p.aux()), stream_);
  return err == cudaSuccess ? std::string() : "the epilogue's pass: " + cuda_error_text(err);
}

std::unique_ptr<LtGemm> VendorCalls::lt_gemm(const Problem& problem) {
  const cublasLtHandle_t handle = lt();
  if (lt_workspace_.bytes() < kLtWorkspaceBytes) lt_workspace_ = DeviceBuffer(kLtWorkspaceBytes);
  try {
    return std::make_unique<LtGemm>(handle, problem);
  } catch (const Error&) {  // cuBLASLt has no such epilogue: cuBLAS and the pass race alone
    return nullptr;
  }
}

void VendorCalls::time(const PreparedProblem& p, bool time_vendor, const RunVerifier& verify,
                       InterleavedTimer* timer, CublasTiming* out) {
  // cuBLASLt's descriptors here describe one GEMM: a batch races cuBLAS's batched call only.
  const std::unique_ptr<LtGemm> lt =
      time_vendor && !p.problem().batched() ? lt_gemm(p.problem()) : nullptr;
  Race race;
  race.launchers.push_back([this, &p] { return run_cublas(p); });
  race.trials.emplace_back().config = cublas_default_call();
  std::vector<LtReadyAlgo> ready;
  ready.reserve(size_t(kLtAlgorithms));  // the launchers hold pointers into it
  if (lt)
    add_lt_contenders(*lt, p.epilogue_call(), lt_workspace_.get(), stream_, &ready, &race, out);

  double estimate_ms = 0;
  const std::vector<size_t> timed = verify_race(verify, &race, &estimate_ms);
  std::vector<Launcher> timed_launchers;
  for (size_t i : timed) timed_launchers.push_back(race.launchers[i]);
  std::vector<TimingStats> stats;
  const std::string error = timer->time(timed_launchers, estimate_ms, p.timing(), &stats);
  if (!error.empty()) fail("timing cuBLAS: {}", error);
  out->min_us = stats[0].min_us;
  out->median_us = stats[0].median_us;
  out->max_us = stats[0].max_us;
  out->runs = stats[0].runs;
  // cuBLASLt's descriptors describe no batch, so a batch's one contender is cuBLAS's batched
  // call itself: a tuned batch is then never served slower than that call.
  const bool batch_contender =
      time_vendor && p.problem().batched() && !p.problem().epilogue.any() && !p.fp8();
  if (!lt && !batch_contender) return;
  // verify leaves a passing trial's status as it was (invalid, the default): only the timing
  // makes it ok.
  for (size_t t = 0; t < timed.size(); ++t)
    if (race.verified[timed[t]]) p.record_ok(&race.trials[timed[t]], stats[t]);
  // An FP8 problem's cuBLAS call is cuBLASLt's FP8 call, or where cuBLASLt has none the 16-bit
  // GEMM of the decoded operands: a yardstick that cannot serve the FP8 problem, so no contender.
  const size_t first = p.fp8() && !p.fp8()->has_lt() ? 1 : 0;
  for (size_t i = first; i < race.trials.size(); ++i)
    out->vendor_trials.push_back(std::move(race.trials[i]));
}

}  // namespace tgemm
