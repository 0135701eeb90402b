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
  Shard config_share;  // count > 1: identical GPUs, each measuring a share of the configs
  SessionTotals totals;
  std::string error;  // empty when the session finished
};

// Whether every GPU is of one kind (same name and arch): one device row in the database,
// so their trials pool into the same bests.
bool identical(const std::vector<DeviceInfo>& gpus) {
  return std::all_of(gpus.begin(), gpus.end(), [&](const DeviceInfo& g) {
    return g.name == gpus.front().name && g.arch == gpus.front().arch;
  });
}

// Identical GPUs: every GPU gets every problem and share d of the configs, so a problem's
// sample is measured once, split between them (compiles too), and each problem gets the
// same bests as on one GPU. Different kinds are different devices: the problems are split
// (assign_problems), each tuned on one kind.
std::vector<DeviceShare> share_out(const std::vector<NamedProblem>& problems,
                                   const std::vector<DeviceInfo>& gpus) {
  std::vector<DeviceShare> shares;
  if (identical(gpus)) {
    for (size_t d = 0; d < gpus.size(); ++d) {
      DeviceShare share{gpus[d], {}, {d, gpus.size()}, {}, {}};
      for (const NamedProblem& p : problems) share.problem_keys.push_back(p.problem.key());
      shares.push_back(std::move(share));
    }
    return shares;
  }
  const std::vector<std::vector<size_t>> split = assign_problems(problems, gpus.size());
  for (size_t d = 0; d < gpus.size(); ++d) {
    if (split[d].empty()) {
      spdlog::info("GPU {}: no problem left for it ({} problem(s) for {} GPU(s))", gpus[d].ordinal,
                   problems.size(), gpus.size());
      continue;
    }
    DeviceShare share{gpus[d], {}, {}, {}, {}};
    for (size_t i : split[d]) share.problem_keys.push_back(problems[i].problem.key());
    shares.push_back(std::move(share));
  }
  return shares;
}

// "GPU 1 NVIDIA H200: 8 problem(s), 812 trial(s) measured, 8 best(s)": the trials this GPU's
// session measured, and the bests the database holds for its problems on its device.
std::string gpu_line(TuningDb& db, const DeviceShare& share) {
  size_t bests = 0;
  for (const std::string& key : share.problem_keys)
    bests += db.best_entries(key, share.gpu.name, share.gpu.arch).size();
  const std::string configs =
      share.config_share.count > 1
          ? fmt::format(" (configs {}/{})", share.config_share.index, share.config_share.count)
          : "";
  return fmt::format("GPU {} {}: {} problem(s){}, {} trial(s) measured, {} best(s){}",
                     share.gpu.ordinal, share.gpu.name, share.problem_keys.size(), configs,
                     share.totals.trials_run, bests, share.error.empty() ? "" : " (failed)");
}

}  // namespace

void run_on_devices(const TuneOptions& options, const std::vector<DeviceInfo>& gpus) {
  if (gpus.empty()) fail("run_on_devices: no GPU to tune on");
  std::vector<NamedProblem> problems = load_tunable_problem_set(options.shapes_path);
  std::erase_if(problems,
                [&](const NamedProblem& p) { return !in_shard(p.problem.key(), options.shard); });
  std::vector<DeviceShare> shares = share_out(problems, gpus);
  if (shares.empty() || problems.empty()) {  // the shard holds nothing: one session says so
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
    one.config_share = shares[s].config_share;
    one.command_line += fmt::format(" (GPU {}'s share)", one.device);
    threads.emplace_back([one = std::move(one), share = &shares[s]] {
      try {
        share->totals = run_tuning_session(one);
      } catch (const std::exception& e) {
        share->error = e.what();
        spdlog::error("GPU {}: {}", share->gpu.ordinal, share->error);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  TuningDb db(options.db_path, TuningDb::Mode::read_write);
  // Identical GPUs' sessions each chose bests from what the database held when they finished
  // a problem; now that every share is in, choose again from all of it.
  if (shares.front().config_share.count > 1 && !options.compile_only) {
    const int64_t device_id = db.upsert_device(shares.front().gpu);
    for (const NamedProblem& p : problems)
      db.update_best(db.upsert_problem(p.problem), device_id, &shares.front().totals.build);
  }
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
