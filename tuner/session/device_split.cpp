#include "tuner/session/device_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>

#include "src/core/error.h"
#include "src/templates/gemm_template.h"

namespace tgemm {

DeviceList parse_device_list(const std::string& text) {
  DeviceList list;
  if (text == "all") {
    list.all = true;
    return list;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, comma - start);
    if (entry.empty() || entry.size() > 4 || entry.find_first_not_of("0123456789") != entry.npos)
      fail(
          "--devices must be 'all' or CUDA device ordinals separated by commas (e.g. 0,1), each "
          "0 to 9999, not '{}'",
          text);
    const int ordinal = std::stoi(entry);
    if (std::find(list.ordinals.begin(), list.ordinals.end(), ordinal) != list.ordinals.end())
      fail("--devices lists GPU {} twice in '{}'; list each GPU once", ordinal, text);
    list.ordinals.push_back(ordinal);
    if (comma == text.size()) return list;
    start = comma + 1;
  }
}

std::string describe_gpus(const std::vector<DeviceInfo>& gpus, const std::string& why_none) {
  if (gpus.empty()) return fmt::format("no GPU ({})", why_none);
  std::string out = fmt::format("{} GPU(s):", gpus.size());
  for (size_t i = 0; i < gpus.size(); ++i)
    out += fmt::format("{} {} {} ({})", i ? "," : "", gpus[i].ordinal, gpus[i].name, gpus[i].arch);
  return out;
}

std::vector<DeviceInfo> resolve_devices(const DeviceList& list, const std::vector<DeviceInfo>& gpus,
                                        const std::string& why_none) {
  if (list.all) return gpus;
  std::vector<DeviceInfo> chosen;
  for (int ordinal : list.ordinals) {
    if (ordinal >= int(gpus.size()))
      fail("--devices: GPU {} does not exist; this machine has {}", ordinal,
           describe_gpus(gpus, why_none));
    chosen.push_back(gpus[size_t(ordinal)]);
  }
  return chosen;
}

// What a trial costs besides the GEMM itself (worker round trip, module load, the checked
// run), as the work of a mid-size GEMM timed in full: a few milliseconds either way.
constexpr double kTrialOverheadFlops = 4e9;

double estimated_tuning_cost(const Problem& problem) {
  return problem.flops() + kTrialOverheadFlops;
}

namespace {

// Position of each problem's variant in first-seen order, and how many variants there are.
std::vector<size_t> variant_indices(const std::vector<NamedProblem>& problems, size_t* count) {
  std::map<std::string, size_t> first_seen;
  std::vector<size_t> out;
  for (const NamedProblem& p : problems)
    out.push_back(
        first_seen.try_emplace(build_variant(p.problem).functional_key(), first_seen.size())
            .first->second);
  *count = first_seen.size();
  return out;
}

}  // namespace

namespace {

// Longest processing time first: each unit (a list of problems), the costliest first, to the
// least-loaded device; ties keep the units' order, so the split depends on the file alone.
std::vector<std::vector<size_t>> lpt(const std::vector<std::vector<size_t>>& units,
                                     const std::vector<double>& cost, size_t devices,
                                     double* makespan) {
  std::vector<double> unit_cost;
  for (const auto& unit : units) {
    double sum = 0;
    for (size_t i : unit) sum += cost[i];
    unit_cost.push_back(sum);
  }
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return unit_cost[a] > unit_cost[b]; });
  std::vector<std::vector<size_t>> share(devices);
  std::vector<double> load(devices, 0.0);
  for (size_t u : order) {
    const size_t d = size_t(std::min_element(load.begin(), load.end()) - load.begin());
    share[d].insert(share[d].end(), units[u].begin(), units[u].end());
    load[d] += unit_cost[u];
  }
  *makespan = *std::max_element(load.begin(), load.end());
  return share;
}

// Whole variants may take this much longer than the best split of single problems: a GPU
// that has a variant to itself compiles its cubins for no one else.
constexpr double kWholeVariantSlack = 1.1;

}  // namespace

std::vector<std::vector<size_t>> assign_problems(const std::vector<NamedProblem>& problems,
                                                 size_t devices) {
  if (devices == 0) fail("assign_problems: no device to assign {} problem(s) to", problems.size());
  std::vector<double> cost;
  for (const NamedProblem& p : problems) cost.push_back(estimated_tuning_cost(p.problem));
  size_t variant_count = 0;
  const std::vector<size_t> variant = variant_indices(problems, &variant_count);
  std::vector<std::vector<size_t>> singles(problems.size()), groups(variant_count);
  for (size_t i = 0; i < problems.size(); ++i) {
    singles[i] = {i};
    groups[variant[i]].push_back(i);
  }
  double by_problem = 0, by_variant = 0;
  std::vector<std::vector<size_t>> share = lpt(singles, cost, devices, &by_problem);
  std::vector<std::vector<size_t>> whole = lpt(groups, cost, devices, &by_variant);
  if (by_variant <= kWholeVariantSlack * by_problem) share = std::move(whole);
  for (size_t d = 0; d < devices; ++d) {
    const size_t first = d * variant_count / devices;
    const auto rank = [&](size_t i) {
      return std::pair((variant[i] + variant_count - first) % variant_count, i);
    };
    std::sort(share[d].begin(), share[d].end(),
              [&](size_t a, size_t b) { return rank(a) < rank(b); });
  }
  return share;
}

}  // namespace tgemm
