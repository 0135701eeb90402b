#include "tuner/session/multi_device_run.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <thread>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tuner/evaluate/worker_client.h"
#include "tuner/input/problem_set.h"
#include "tuner/report/progress_line.h"
#include "tuner/session/device_split.h"

namespace tgemm {

// Far more GPUs than one host holds: the probing stops there whatever the worker says.
constexpr int kMaxProbedDevices = 64;

std::vector<DeviceInfo> visible_gpus(const std::string& worker_path,
                                     std::chrono::milliseconds timeout, std::string* why) {
  std::vector<DeviceInfo> gpus;
  for (int ordinal = 0; ordinal < kMaxProbedDevices; ++ordinal) {
    std::string reason;
    std::optional<DeviceInfo> device =
        WorkerClient(worker_path, ordinal, timeout).probe_device(&reason);
    if (!device) {
      if (gpus.empty() && why) *why = reason;
      break;
    }
    device->ordinal = ordinal;
    gpus.push_back(std::move(*device));
  }
  return gpus;
}

namespace {

// One GPU's session and how it ended.
struct DeviceShare {
  DeviceInfo gpu;
  std::vector<std::string> problem_keys;
  std::string error;  // empty when the session finished
};

// "GPU 1 NVIDIA H200: 8 problem(s), 812 trial(s), 8 best(s)": what the database holds for
// the GPU's problems on its device (each problem is tuned on one GPU only, so identical GPUs,
// which share a device row, are still told apart).
std::string gpu_line(TuningDb& db, const DeviceShare& share) {
  size_t trials = 0, bests = 0;
  for (const std::string& key : share.problem_keys) {
    for (const TrialRecord& r : db.trials(key, share.gpu.name)) trials += r.arch == share.gpu.arch;
    bests += db.best_entries(key, share.gpu.name, share.gpu.arch).size();
  }
  return fmt::format("GPU {} {}: {} problem(s), {} trial(s), {} best(s){}", share.gpu.ordinal,
                     share.gpu.name, share.problem_keys.size(), trials, bests,
                     share.error.empty() ? "" : " (failed)");
}

}  // namespace

void run_on_devices(const TuneOptions& options, const std::vector<DeviceInfo>& gpus) {
  if (gpus.empty()) fail("run_on_devices: no GPU to tune on");
  std::vector<NamedProblem> problems = load_problem_set(options.shapes_path);
  std::erase_if(problems,
                [&](const NamedProblem& p) { return !in_shard(p.problem.key(), options.shard); });
  std::vector<DeviceShare> shares;
  const std::vector<std::vector<size_t>> split = assign_problems(problems, gpus.size());
  for (size_t d = 0; d < gpus.size(); ++d) {
    if (split[d].empty()) {
      spdlog::info("GPU {}: no problem left for it ({} problem(s) for {} GPU(s))", gpus[d].ordinal,
                   problems.size(), gpus.size());
      continue;
    }
    DeviceShare share{gpus[d], {}, {}};
    for (size_t i : split[d]) share.problem_keys.push_back(problems[i].problem.key());
    shares.push_back(std::move(share));
  }
  if (shares.empty()) {  // the shard holds nothing: one session says so and leaves the file
    TuneOptions one = options;
    one.device = gpus.front().ordinal;
    run_tuning_session(one);
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (size_t s = 0; s < shares.size(); ++s) {
    TuneOptions one = options;
    one.device = shares[s].gpu.ordinal;
    // The compiles are shared out too: the sessions compile at once on one host's cores.
    one.jobs = std::max<int>(1, options.jobs / int(shares.size()) +
                                    (int(s) < options.jobs % int(shares.size()) ? 1 : 0));
    one.problem_keys = shares[s].problem_keys;
    one.command_line += fmt::format(" (GPU {}'s share)", one.device);
    threads.emplace_back([one = std::move(one), share = &shares[s]] {
      try {
        run_tuning_session(one);
      } catch (const std::exception& e) {
        share->error = e.what();
        spdlog::error("GPU {}: {}", share->gpu.ordinal, share->error);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  TuningDb db(options.db_path, TuningDb::Mode::read_only);
  std::string line =
      fmt::format("devices: {} GPU(s) in {}", shares.size(), format_duration(seconds));
  std::string errors;
  for (const DeviceShare& share : shares) {
    line += "; " + gpu_line(db, share);
    if (!share.error.empty())
      errors +=
          fmt::format("{}GPU {}: {}", errors.empty() ? "" : "; ", share.gpu.ordinal, share.error);
  }
  fmt::print("{}\n", line);
  if (!errors.empty()) fail("{}", errors);
}

}  // namespace tgemm
