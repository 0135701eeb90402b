// tgemm-worker: the process that owns one GPU for the tuner. It reads requests on fd 3 and
// answers on fd 4, one JSON message per line (worker_protocol.h), so that whatever libraries
// print on stdout/stderr cannot corrupt the protocol. Started by WorkerClient; exits on
// `quit`, on EOF, and right after answering when a sticky CUDA error has ruined its context.
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <signal.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <variant>

#include "src/core/error.h"
#include "tuner/cli/option_checks.h"
#include "tuner/evaluate/ceiling_probe.h"
#include "tuner/evaluate/gemm_evaluator.h"
#include "tuner/evaluate/worker_protocol.h"

namespace tgemm {
namespace {

// Exit status after a sticky CUDA error, so the client can tell it from a clean quit.
constexpr int kExitContextLost = 3;

class WorkerSession {
 public:
  explicit WorkerSession(int device) : device_(device) {}

  WorkerResponse handle(const WorkerRequest& request) {
    WorkerResponse response;
    if (const auto* prepare = std::get_if<PrepareRequest>(&request)) {
      response.body = PrepareResponse{do_prepare(*prepare)};
    } else if (const auto* evaluate = std::get_if<EvaluateRequest>(&request)) {
      response.body = EvaluateResponse{do_evaluate(*evaluate)};
    } else if (const auto* compare = std::get_if<CompareRequest>(&request)) {
      response.body = CompareResponse{do_compare(*compare)};
    } else if (std::holds_alternative<CeilingsRequest>(request)) {
      response.body = CeilingsResponse{do_ceilings()};
    } else {
      response.body = do_probe();
    }
    response.worker_exits = evaluator_ && evaluator_->context_broken();
    return response;
  }

 private:
  // Why this worker has no usable GPU, or "" when it has one. Touches CUDA the first time.
  std::string missing_device() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();
      return fmt::format("no CUDA driver/device ({})", cudaGetErrorString(err));
    }
    if (count == 0) return "no CUDA driver/device (no GPU found)";
    if (device_ < 0 || device_ >= count)
      return fmt::format("CUDA device {} does not exist ({} device(s) present)", device_, count);
    return {};
  }

  ProbeResponse do_probe() {
    ProbeResponse r;
    if (evaluator_) {
      r.device = evaluator_->device();
      return r;
    }
    r.why = missing_device();
    if (!r.why.empty()) return r;
    try {
      r.device = query_device(device_);
    } catch (const Error& e) {
      r.why = e.what();
    }
    return r;
  }

  // Creates the evaluator (the CUDA context) on the first request that needs the GPU.
  std::string ensure_evaluator() {
    if (evaluator_) return {};
    if (std::string why = missing_device(); !why.empty()) return why;
    try {
      evaluator_ = std::make_unique<GemmEvaluator>(device_);
    } catch (const Error& e) {
      return e.what();
    }
    return {};
  }

  CublasTiming do_prepare(const PrepareRequest& request) {
    CublasTiming timing;
    timing.error = ensure_evaluator();
    if (!timing.error.empty()) return timing;
    return evaluator_->prepare(request.problem, request.timing,
                               GemmScalars{request.alpha, request.beta}, request.time_cublas,
                               request.time_vendor);
  }

  // The cubin file, or an error text.
  static std::string read_cubin(const std::string& path, std::vector<char>* cubin) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return fmt::format("cannot open the cubin '{}'", path);
    cubin->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad() || cubin->empty()) return fmt::format("cannot read the cubin '{}'", path);
    return {};
  }

  TrialResult do_evaluate(const EvaluateRequest& request) {
    TrialResult r;
    r.config = request.config;
    r.status = TrialStatus::launch_failed;
    std::vector<char> cubin;
    if (!evaluator_ || !evaluator_->prepared()) {
      r.error = "no problem prepared on the worker";
    } else if (std::string error = read_cubin(request.cubin_path, &cubin); !error.empty()) {
      r.error = error;
    } else {
      r = evaluator_->evaluate(request.config, cubin, request.cutoff_us);
    }
    return r;
  }

  Comparison do_compare(const CompareRequest& request) {
    Comparison c;
    std::vector<char> cubin;
    if (!evaluator_ || !evaluator_->prepared()) {
      c.error = "no problem prepared on the worker";
    } else if (std::string error = read_cubin(request.cubin_path, &cubin); !error.empty()) {
      c.error = error;
    } else {
      c = evaluator_->compare(request.config, cubin);
    }
    return c;
  }

  CeilingMeasurements do_ceilings() {
    CeilingMeasurements m;
    m.error = ensure_evaluator();
    if (!m.error.empty()) return m;
    return measure_ceilings(device_);
  }

  int device_;
  std::unique_ptr<GemmEvaluator> evaluator_;
};

int serve(int device, int in_fd, int out_fd) {
  WorkerSession session(device);
  FrameDecoder decoder;
  for (;;) {
    std::string payload;
    if (!read_frame(in_fd, decoder, &payload)) return 0;  // the tuner went away
    WorkerResponse response;
    bool quit = false;
    try {
      const WorkerRequest request = decode_request(payload);
      quit = std::holds_alternative<QuitRequest>(request);
      if (!quit) response = session.handle(request);
    } catch (const Error& e) {
      response = WorkerResponse{ErrorResponse{e.what()}, false};
    }
    if (quit) return 0;
    write_frame(out_fd, encode_response(response));
    // A lost context cannot be repaired in this process; tearing it down could even hang.
    if (response.worker_exits) std::_Exit(kExitContextLost);
  }
}

}  // namespace
}  // namespace tgemm

int main(int argc, char** argv) {
  CLI::App app{
      "tgemm-worker: evaluates GEMM kernels on one GPU for tgemm-tune. Started by the tuner; "
      "reads requests on fd 3 and answers on fd 4."};
  int device = 0;
  bool stdio = false;
  app.add_option("--device", device, "CUDA device ordinal")
      ->transform(tgemm::cli::device_ordinal());
  app.add_flag(
      "--stdio", stdio,
      "Read requests on stdin and answer on stdout, e.g. {\"type\":\"probe\"} (for debugging)");
  if (int exit_code = tgemm::cli::parse(app, argc, argv); exit_code >= 0) return exit_code;

  const int in_fd = stdio ? 0 : tgemm::kWorkerRequestFd;
  const int out_fd = stdio ? 1 : tgemm::kWorkerResponseFd;
  if (::fcntl(in_fd, F_GETFD) < 0 || ::fcntl(out_fd, F_GETFD) < 0) {
    std::fprintf(stderr,
                 "tgemm-worker: fd %d and fd %d must be open: the worker is started by "
                 "tgemm-tune (use --stdio to drive it by hand)\n",
                 in_fd, out_fd);
    return 2;
  }
  // A vanished tuner shows up as a write error, which ends the loop below.
  ::signal(SIGPIPE, SIG_IGN);
  try {
    return tgemm::serve(device, in_fd, out_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm-worker: %s\n", e.what());
    return 1;
  }
}
