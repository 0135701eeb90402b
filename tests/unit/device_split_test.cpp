// tgemm-tune --devices: which lists are accepted and refused, how they resolve against the
// GPUs there are, and the split of a shape file's problems between GPUs (every problem once,
// the same split every time, balanced loads, variants grouped and started apart).
#include "tuner/session/device_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "src/core/error.h"
#include "src/templates/gemm_template.h"
#include "tests/common/shape_files.h"
#include "tests/common/temp_dir.h"
#include "tuner/input/problem_set.h"

namespace tgemm {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_device_list(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

DeviceInfo gpu(int ordinal, const std::string& name = "NVIDIA H200") {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = name;
  d.arch = "sm_90";
  return d;
}

TEST(DeviceList, all_means_every_visible_gpu) {
  const DeviceList list = parse_device_list("all");
  EXPECT_TRUE(list.all);
  EXPECT_TRUE(list.ordinals.empty());
}

TEST(DeviceList, parses_ordinals_in_the_order_listed) {
  EXPECT_EQ(parse_device_list("0").ordinals, std::vector<int>({0}));
  EXPECT_EQ(parse_device_list("0,1").ordinals, std::vector<int>({0, 1}));
  EXPECT_EQ(parse_device_list("3,0,12").ordinals, std::vector<int>({3, 0, 12}));
  EXPECT_FALSE(parse_device_list("0,1").all);
}

TEST(DeviceList, rejects_malformed_lists_naming_the_option_and_what_is_allowed) {
  for (const char* bad : {"", ",", "0,", ",1", "0,,1", "a", "-1", "0 1", "0;1", "1.5", "10000",
                          "ALL", "all,0", "0x1", " 0"}) {
    const std::string msg = error_of(bad);
    EXPECT_NE(msg.find("--devices must be 'all' or CUDA device ordinals separated by commas"),
              std::string::npos)
        << "'" << bad << "': " << msg;
    EXPECT_NE(msg.find(std::string("not '") + bad + "'"), std::string::npos) << msg;
  }
}

TEST(DeviceList, rejects_a_gpu_listed_twice) {
  const std::string msg = error_of("0,1,0");
  EXPECT_NE(msg.find("--devices lists GPU 0 twice in '0,1,0'"), std::string::npos) << msg;
  EXPECT_NE(error_of("2,2").find("GPU 2 twice"), std::string::npos);
}

TEST(ResolveDevices, all_gives_every_gpu_and_none_without_one) {
  EXPECT_TRUE(resolve_devices(parse_device_list("all"), {}, "no CUDA driver").empty());
  const auto two = resolve_devices(parse_device_list("all"), {gpu(0), gpu(1)}, "");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].ordinal, 1);
}

TEST(ResolveDevices, keeps_the_listed_gpus_in_order) {
  const auto chosen = resolve_devices(parse_device_list("2,0"), {gpu(0), gpu(1), gpu(2, "L4")}, "");
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].ordinal, 2);
  EXPECT_EQ(chosen[0].name, "L4");
  EXPECT_EQ(chosen[1].ordinal, 0);
}

TEST(ResolveDevices, rejects_a_missing_gpu_naming_the_gpus_there_are) {
  try {
    resolve_devices(parse_device_list("0,2"), {gpu(0), gpu(1)}, "");
    FAIL() << "GPU 2 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--devices: GPU 2 does not exist; this machine has 2 GPU(s): 0 NVIDIA H200 "
                 "(sm_90), 1 NVIDIA H200 (sm_90)");
  }
  try {
    resolve_devices(parse_device_list("0"), {}, "no CUDA driver/device (no GPU found)");
    FAIL() << "GPU 0 accepted without a GPU";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "--devices: GPU 0 does not exist; this machine has no GPU (no CUDA "
                 "driver/device (no GPU found))");
  }
}

using testing::shipped_shape_files;

TEST(AssignProblems, every_problem_of_every_shipped_shape_file_goes_to_exactly_one_gpu) {
  const auto files = shipped_shape_files();
  ASSERT_GE(files.size(), 4u);
  for (const std::string& file : files) {
    const auto problems = load_problem_set(file);
    for (size_t n : {1, 2, 3, 7, 40}) {
      const auto split = assign_problems(problems, n);
      ASSERT_EQ(split.size(), n);
      std::vector<int> times(problems.size(), 0);
      for (const auto& share : split)
        for (size_t i : share) ++times.at(i);
      for (size_t i = 0; i < problems.size(); ++i)
        EXPECT_EQ(times[i], 1) << file << " N=" << n << " " << problems[i].name;
    }
  }
}

TEST(AssignProblems, splits_the_same_way_every_time) {
  for (const std::string& file : shipped_shape_files()) {
    const auto problems = load_problem_set(file);
    EXPECT_EQ(assign_problems(problems, 2), assign_problems(problems, 2)) << file;
    EXPECT_EQ(assign_problems(problems, 3), assign_problems(problems, 3)) << file;
  }
}

double cost_of(const std::vector<NamedProblem>& problems, const std::vector<size_t>& share) {
  double sum = 0;
  for (size_t i : share) sum += estimated_tuning_cost(problems[i].problem);
  return sum;
}

// List scheduling's bound (an even share plus one problem), with the slack whole variants get.
TEST(AssignProblems, no_gpu_gets_more_than_an_even_share_and_one_problem) {
  for (const std::string& file : shipped_shape_files()) {
    const auto problems = load_problem_set(file);
    double largest = 0, total = 0;
    for (const auto& p : problems) {
      largest = std::max(largest, estimated_tuning_cost(p.problem));
      total += estimated_tuning_cost(p.problem);
    }
    for (size_t n : {2, 3, 4})
      for (const auto& share : assign_problems(problems, n))
        EXPECT_LE(cost_of(problems, share), 1.1 * (total / double(n) + largest))
            << file << " N=" << n;
  }
}

// deepbench.yaml is one variant (f32 NN): whole variants would leave one GPU idle. Its
// largest shape outweighs all the others, so it gets a GPU to itself.
TEST(AssignProblems, shares_a_single_variant_set_between_gpus) {
  const auto problems = load_problem_set(TGEMM_SOURCE_DIR "/configs/shapes/deepbench.yaml");
  const auto split = assign_problems(problems, 2);
  ASSERT_FALSE(split[0].empty());
  ASSERT_FALSE(split[1].empty());
  size_t largest = 0;
  for (size_t i = 0; i < problems.size(); ++i)
    if (problems[i].problem.flops() > problems[largest].problem.flops()) largest = i;
  EXPECT_EQ(split[0], std::vector<size_t>({largest}));
}

// Two variants of equal cost whose problems, split one by one, would mix on both GPUs.
const char* const kTwoVariantsOfEqualCost = R"(defaults: {dtype: f32, layout: NN}
shapes:
  - [1024, 1024, 3072]
  - [1024, 1024, 3071]
  - [1024, 1024, 2048]
  - {m: 1024, n: 1024, k: 3070, layout: TN}
  - {m: 1024, n: 1024, k: 3069, layout: TN}
  - {m: 1024, n: 1024, k: 2047, layout: TN}
)";

TEST(AssignProblems, keeps_variants_whole_when_that_balances) {
  testing::TempDir dir("assign_whole");
  const auto problems = load_problem_set(dir.write("two.yaml", kTwoVariantsOfEqualCost));
  const auto split = assign_problems(problems, 2);
  for (const auto& share : split) {
    ASSERT_EQ(share.size(), 3u);
    for (size_t i : share)
      EXPECT_EQ(problems[i].problem.layout(), problems[share[0]].problem.layout());
  }
}

// Five NN and three TN problems of about one size: whole variants would be 5 against 3, so
// both GPUs hold both, grouped, and start on different ones.
TEST(AssignProblems, groups_each_gpus_problems_by_variant_and_starts_gpus_on_different_ones) {
  testing::TempDir dir("assign");
  const std::string shapes = dir.write("two.yaml", R"(defaults: {dtype: f32, layout: NN}
shapes:
  - [256, 256, 263]
  - [256, 256, 262]
  - [256, 256, 261]
  - [256, 256, 260]
  - [256, 256, 259]
  - {m: 256, n: 256, k: 258, layout: TN}
  - {m: 256, n: 256, k: 257, layout: TN}
  - {m: 256, n: 256, k: 256, layout: TN}
)");
  const auto problems = load_problem_set(shapes);
  const auto split = assign_problems(problems, 2);
  std::vector<std::string> first_layouts;
  for (const auto& share : split) {
    std::vector<std::string> runs;  // the variants in the order the share holds them, merged
    for (size_t i : share) {
      const std::string v = build_variant(problems[i].problem).functional_key();
      if (runs.empty() || runs.back() != v) runs.push_back(v);
    }
    EXPECT_EQ(runs.size(), 2u) << "each GPU holds both variants, each once";
    EXPECT_EQ(std::set<std::string>(runs.begin(), runs.end()).size(), runs.size())
        << "a variant's problems are not together";
    first_layouts.push_back(problems[share.front()].problem.layout());
  }
  EXPECT_EQ(first_layouts, std::vector<std::string>({"NN", "TN"}));
}

}  // namespace
}  // namespace tgemm
