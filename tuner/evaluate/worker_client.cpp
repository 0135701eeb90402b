#include "tuner/evaluate/worker_client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "src/core/error.h"
#include "tuner/evaluate/worker_protocol.h"

extern char** environ;

namespace tgemm {

struct WorkerRequestOutcome {
  std::optional<WorkerResponse> response;
  TrialStatus failure = TrialStatus::crashed;  // crashed or timeout when there is no response
  std::string error;
};

namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How long a worker may take to exit after its request pipe closes or it announced its exit.
constexpr milliseconds kExitGrace{3000};

// A dead worker turns writes into EPIPE; the default SIGPIPE would kill the whole tuner.
// Left alone when the application installed its own handler.
void ignore_sigpipe() {
  struct sigaction current {};
  if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, nullptr);
  }
}

std::string describe_wait_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return fmt::format("was killed by signal {} ({})", sig, name ? name : "?");
  }
  return fmt::format("ended with wait status {}", status);
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Rounded up: poll() with the truncated count would time out up to 1 ms before the deadline.
int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : int(std::min<long long>(left, 1 << 30));
}

// The problem's scalars: beta == 0 unless the problem says otherwise.
PrepareRequest make_prepare(const Problem& problem, const TimingOptions& timing, bool time_cublas,
                            bool time_vendor = false) {
  PrepareRequest r;
  r.problem = problem;
  r.timing = timing;
  r.alpha = 1.0f;
  r.beta = problem.beta_zero ? 0.0f : 1.0f;
  r.time_cublas = time_cublas;
  r.time_vendor = time_vendor;
  return r;
}

// "timeout: tgemm-worker gave no answer ..." for results that carry no TrialStatus.
std::string failure_text(const WorkerRequestOutcome& outcome) {
  return fmt::format("{}: {}", to_string(outcome.failure), outcome.error);
}

}  // namespace

WorkerClient::WorkerClient(std::string worker_path, int device, milliseconds timeout,
                           TimingOptions timing)
    : worker_path_(std::move(worker_path)), device_(device), timeout_(timeout), timing_(timing) {
  if (::access(worker_path_.c_str(), X_OK) != 0)
    fail("cannot start the evaluation worker '{}': {}", worker_path_, std::strerror(errno));
  if (std::filesystem::is_directory(worker_path_))
    fail("cannot start the evaluation worker '{}': it is a directory", worker_path_);
  if (timeout_.count() <= 0) fail("worker timeout must be positive, got {} ms", timeout_.count());
  ignore_sigpipe();
  std::string templ = (std::filesystem::temp_directory_path() / "tgemm-cubins-XXXXXX").string();
  if (!::mkdtemp(templ.data()))
    fail("cannot create a temporary directory '{}': {}", templ, std::strerror(errno));
  temp_dir_ = templ;
}

WorkerClient::~WorkerClient() {
  if (pid_ > 0) {
    // Best effort: a healthy worker quits on the request (or on EOF); a stuck one is killed.
    try {
      const std::string frame = encode_frame(encode_request(QuitRequest{}));
      [[maybe_unused]] ssize_t ignored = ::write(to_worker_, frame.data(), frame.size());
    } catch (...) {
    }
    stop_worker(kExitGrace);
  }
  std::error_code ec;
  std::filesystem::remove_all(temp_dir_, ec);
}

void WorkerClient::start_worker() {
  // Pipes are close-on-exec so that no other child (or later worker) inherits them: a stray
  // copy of a write end would hide the EOF that says a worker died.
  int req[2], resp[2];
  if (::pipe2(req, O_CLOEXEC) != 0) fail("pipe2 failed: {}", std::strerror(errno));
  if (::pipe2(resp, O_CLOEXEC) != 0) {
    const int err = errno;
    ::close(req[0]);
    ::close(req[1]);
    fail("pipe2 failed: {}", std::strerror(err));
  }
  // Move the child's ends above fd 4 so that the dup2s onto 3 and 4 can neither be no-ops
  // (which would keep close-on-exec) nor overwrite each other.
  int child_in = ::fcntl(req[0], F_DUPFD_CLOEXEC, kWorkerResponseFd + 1);
  int child_out = ::fcntl(resp[1], F_DUPFD_CLOEXEC, kWorkerResponseFd + 1);
  ::close(req[0]);
  ::close(resp[1]);
  int parent_out = req[1], parent_in = resp[0];
  auto close_all = [&] {
    close_fd(child_in);
    close_fd(child_out);
    close_fd(parent_out);
    close_fd(parent_in);
  };
  if (child_in < 0 || child_out < 0) {
    const int err = errno;
    close_all();
    fail("fcntl(F_DUPFD_CLOEXEC) failed: {}", std::strerror(err));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, child_in, kWorkerRequestFd);
  posix_spawn_file_actions_adddup2(&actions, child_out, kWorkerResponseFd);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  // Library chatter on the worker's stdout joins its stderr, keeping the tuner's stdout clean.
  posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
  // Nothing else the tuner has open (the database, other workers' pipes) leaks into the worker.
  posix_spawn_file_actions_addclosefrom_np(&actions, kWorkerResponseFd + 1);
#endif
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);  // we ignore SIGPIPE; the worker gets the default back
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  const std::string device = std::to_string(device_);
  std::vector<char*> argv = {const_cast<char*>(worker_path_.c_str()), const_cast<char*>("--device"),
                             const_cast<char*>(device.c_str()), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, worker_path_.c_str(), &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close_fd(child_in);
  close_fd(child_out);
  if (rc != 0) {
    close_all();
    fail("cannot start the evaluation worker '{}': {}", worker_path_, std::strerror(rc));
  }
  // Our ends never block: every wait goes through poll() and the watchdog's deadline.
  ::fcntl(parent_out, F_SETFL, ::fcntl(parent_out, F_GETFL) | O_NONBLOCK);
  ::fcntl(parent_in, F_SETFL, ::fcntl(parent_in, F_GETFL) | O_NONBLOCK);
  pid_ = pid;
  to_worker_ = parent_out;
  from_worker_ = parent_in;
  if (started_before_) ++restarts_;
  started_before_ = true;
}

std::string WorkerClient::stop_worker(milliseconds grace) {
  if (pid_ <= 0) return "was not running";
  close_fd(to_worker_);  // EOF on its request pipe: a healthy worker exits by itself
  const auto deadline = Clock::now() + grace;
  std::string how;
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      how = describe_wait_status(status);
      break;
    }
    if (done < 0 && errno != EINTR) {
      how = fmt::format("could not be waited for ({})", std::strerror(errno));
      break;
    }
    if (Clock::now() >= deadline) {
      ::kill(pid_, SIGKILL);
      status = 0;
      pid_t r;
      do r = ::waitpid(pid_, &status, 0);
      while (r < 0 && errno == EINTR);
      how = fmt::format("did not exit within {} ms and was killed", grace.count());
      break;
    }
    std::this_thread::sleep_for(milliseconds(5));
  }
  close_fd(from_worker_);
  pid_ = -1;
  return how;
}

std::string WorkerClient::kill_worker() {
  if (pid_ <= 0) return "was not running";
  ::kill(pid_, SIGKILL);
  return stop_worker(kExitGrace);
}

WorkerRequestOutcome WorkerClient::exchange(const std::string& kind, const std::string& payload,
                                            milliseconds timeout) {
  WorkerRequestOutcome outcome;
  const auto deadline = Clock::now() + timeout;
  auto died = [&](const std::string& what) {
    outcome.failure = TrialStatus::crashed;
    outcome.error = fmt::format("tgemm-worker {} during the {} request ({})",
                                stop_worker(kExitGrace), kind, what);
    return outcome;
  };
  auto garbled = [&](const std::string& what) {
    outcome.failure = TrialStatus::crashed;
    const std::string how = kill_worker();
    outcome.error = fmt::format(
        "tgemm-worker sent an unreadable answer to the {} request ({}); "
        "killed it (it {})",
        kind, what, how);
    return outcome;
  };
  auto timed_out = [&] {
    outcome.failure = TrialStatus::timeout;
    const std::string how = kill_worker();
    outcome.error = fmt::format(
        "tgemm-worker gave no answer to the {} request within {} ms; "
        "killed it (it {})",
        kind, timeout.count(), how);
    return outcome;
  };

  const std::string frame = encode_frame(payload);
  size_t written = 0;
  while (written < frame.size()) {
    pollfd p{to_worker_, POLLOUT, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return timed_out();
    const ssize_t n = ::write(to_worker_, frame.data() + written, frame.size() - written);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return died(fmt::format("writing the request: {}", std::strerror(errno)));
    }
    written += size_t(n);
  }

  FrameDecoder decoder;
  char chunk[65536];
  for (;;) {
    std::optional<std::string> answer;
    try {
      answer = decoder.next();
    } catch (const Error& e) {
      return garbled(e.what());
    }
    if (answer) {
      try {
        outcome.response = decode_response(*answer);
      } catch (const Error& e) {
        return garbled(e.what());
      }
      break;
    }
    pollfd p{from_worker_, POLLIN, 0};
    const int ready = ::poll(&p, 1, remaining_ms(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) return timed_out();
    const ssize_t n = ::read(from_worker_, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      return died(fmt::format("reading the answer: {}", std::strerror(errno)));
    }
    if (n == 0) return died(decoder.has_partial() ? "its answer was cut short" : "no answer");
    decoder.feed(chunk, size_t(n));
  }

  if (outcome.response->worker_exits) stop_worker(kExitGrace);  // its context is ruined
  if (auto* error = std::get_if<ErrorResponse>(&outcome.response->body))
    fail("tgemm-worker '{}' rejected the {} request: {}", worker_path_, kind, error->error);
  return outcome;
}

WorkerRequestOutcome WorkerClient::request(const std::string& kind, const std::string& payload,
                                           milliseconds timeout) {
  if (pid_ <= 0) {
    start_worker();
    // A fresh worker knows no problem: give it the current one (without timing cuBLAS again).
    if (problem_ && kind != "prepare") {
      const auto prepared = exchange(
          "prepare", encode_request(make_prepare(*problem_, timing_, /*time_cublas=*/false)),
          std::max(timeout_, kSlowRequestTimeout));
      if (!prepared.response) {
        WorkerRequestOutcome failed = prepared;
        failed.error = "re-preparing the problem on a restarted worker: " + prepared.error;
        return failed;
      }
      const auto* answer = std::get_if<PrepareResponse>(&prepared.response->body);
      if (!answer || !answer->cublas.ok || pid_ <= 0) {
        if (pid_ > 0) kill_worker();
        WorkerRequestOutcome failed;
        failed.failure = TrialStatus::crashed;
        failed.error = "re-preparing the problem on a restarted worker failed: " +
                       (answer ? answer->cublas.error : std::string("unexpected answer"));
        return failed;
      }
    }
  }
  return exchange(kind, payload, timeout);
}

std::string WorkerClient::write_cubin(const CompiledKernel& kernel) {
  std::string path = temp_dir_ + "/kernel.cubin";
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(kernel.cubin.data(), std::streamsize(kernel.cubin.size()));
  out.close();
  if (!out) fail("cannot write the cubin to '{}'", path);
  return path;
}

std::optional<DeviceInfo> WorkerClient::probe_device(std::string* why) {
  const auto outcome =
      request("probe", encode_request(ProbeRequest{}), std::max(timeout_, kSlowRequestTimeout));
  std::string reason;
  std::optional<DeviceInfo> device;
  if (!outcome.response) {
    reason = failure_text(outcome);
  } else if (const auto* probe = std::get_if<ProbeResponse>(&outcome.response->body)) {
    device = probe->device;
    reason = probe->why;
  } else {
    reason = "tgemm-worker answered the probe request with another kind of message";
  }
  if (why) *why = device ? std::string() : reason;
  return device;
}

CublasTiming WorkerClient::prepare_problem(const Problem& problem, bool time_vendor) {
  problem.validate();
  problem_ = problem;
  const auto outcome = request(
      "prepare", encode_request(make_prepare(problem, timing_, /*time_cublas=*/true, time_vendor)),
      std::max(timeout_, kSlowRequestTimeout));
  CublasTiming timing;
  if (!outcome.response) {
    timing.error = failure_text(outcome);
  } else if (const auto* prepared = std::get_if<PrepareResponse>(&outcome.response->body)) {
    timing = prepared->cublas;
  } else {
    timing.error = "tgemm-worker answered the prepare request with another kind of message";
  }
  return timing;
}

TrialResult WorkerClient::evaluate(const KernelConfig& config, const CompiledKernel& kernel,
                                   double cutoff_us) {
  if (!problem_) fail("WorkerClient::evaluate called before prepare_problem");
  TrialResult result;
  result.config = config;
  if (!kernel.ok || kernel.cubin.empty()) {
    result.status = TrialStatus::compile_failed;
    result.error = kernel.error.empty() ? "no cubin" : kernel.error;
    return result;
  }
  EvaluateRequest req{config, write_cubin(kernel), cutoff_us};
  const auto outcome = request("evaluate", encode_request(req), timeout_);
  std::filesystem::remove(req.cubin_path);
  if (!outcome.response) {
    result.status = outcome.failure;
    result.error = outcome.error;
  } else if (const auto* answer = std::get_if<EvaluateResponse>(&outcome.response->body)) {
    result = answer->result;
    result.config = config;
  } else {
    result.status = TrialStatus::crashed;
    result.error = "tgemm-worker answered the evaluate request with another kind of message";
  }
  return result;
}

Comparison WorkerClient::compare(const KernelConfig& config, const CompiledKernel& kernel) {
  if (!problem_) fail("WorkerClient::compare called before prepare_problem");
  Comparison comparison;
  if (!kernel.ok || kernel.cubin.empty()) {
    comparison.error = "not compiled: " + (kernel.error.empty() ? "no cubin" : kernel.error);
    return comparison;
  }
  CompareRequest req{config, write_cubin(kernel)};
  const auto outcome = request("compare", encode_request(req), timeout_);
  std::filesystem::remove(req.cubin_path);
  if (!outcome.response) {
    comparison.error = failure_text(outcome);
  } else if (const auto* answer = std::get_if<CompareResponse>(&outcome.response->body)) {
    comparison = answer->comparison;
  } else {
    comparison.error = "tgemm-worker answered the compare request with another kind of message";
  }
  return comparison;
}

CeilingMeasurements WorkerClient::measure_ceilings() {
  const auto outcome = request("ceilings", encode_request(CeilingsRequest{}),
                               std::max(timeout_, kSlowRequestTimeout));
  CeilingMeasurements m;
  if (!outcome.response) {
    m.error = failure_text(outcome);
  } else if (const auto* answer = std::get_if<CeilingsResponse>(&outcome.response->body)) {
    m = answer->ceilings;
  } else {
    m.error = "tgemm-worker answered the ceilings request with another kind of message";
  }
  return m;
}

}  // namespace tgemm
