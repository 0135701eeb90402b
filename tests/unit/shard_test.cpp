// tgemm-tune --shard I/N: which problems a shard holds (every problem of every shipped shape
// file in exactly one shard, whatever the file order) and which --shard values are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "src/core/error.h"
#include "tests/common/shape_files.h"
#include "tuner/input/problem_set.h"
#include "tuner/session/tuning_session.h"

namespace tgemm {
namespace {

using testing::shipped_shape_files;

TEST(Shard, every_problem_of_every_shipped_shape_file_is_in_exactly_one_shard) {
  const auto files = shipped_shape_files();
  ASSERT_GE(files.size(), 4u);
  for (const std::string& file : files) {
    const auto problems = load_problem_set(file);
    for (uint64_t n : {1, 2, 3, 7}) {
      std::map<std::string, int> holders;
      size_t held = 0;
      for (uint64_t i = 0; i < n; ++i)
        for (const auto& p : problems)
          if (in_shard(p.problem.key(), Shard{i, n})) {
            ++holders[p.problem.key()];
            ++held;
          }
      EXPECT_EQ(held, problems.size()) << file << " N=" << n;
      for (const auto& p : problems)
        EXPECT_EQ(holders[p.problem.key()], 1) << file << " N=" << n << " " << p.problem.key();
    }
  }
}

TEST(Shard, shard_of_a_problem_does_not_depend_on_file_order) {
  auto problems = load_problem_set(TGEMM_SOURCE_DIR "/configs/shapes/deepbench.yaml");
  const auto keys_in = [](const std::vector<NamedProblem>& list, Shard shard) {
    std::vector<std::string> keys;
    for (const auto& p : list)
      if (in_shard(p.problem.key(), shard)) keys.push_back(p.problem.key());
    std::sort(keys.begin(), keys.end());
    return keys;
  };
  const auto before = keys_in(problems, Shard{1, 3});
  std::shuffle(problems.begin(), problems.end(), std::mt19937(7));
  EXPECT_EQ(keys_in(problems, Shard{1, 3}), before);
  EXPECT_FALSE(before.empty());
}

TEST(Shard, one_shard_holds_everything) {
  for (const auto& p : load_problem_set(TGEMM_SOURCE_DIR "/configs/shapes/llm.yaml"))
    EXPECT_TRUE(in_shard(p.problem.key(), Shard{}));
}

TEST(Shard, parses_index_and_count) {
  const Shard a = parse_shard("0/1");
  EXPECT_EQ(a.index, 0u);
  EXPECT_EQ(a.count, 1u);
  const Shard b = parse_shard("6/7");
  EXPECT_EQ(b.index, 6u);
  EXPECT_EQ(b.count, 7u);
}

TEST(Shard, rejects_values_outside_zero_to_count_and_non_numbers) {
  for (const char* bad :
       {"3/2", "2/2", "-1/2", "a/b", "1/0", "1", "", "/", "1/", "/2", "1/2/3", " 1/2", "1/2 ",
        "+1/2", "1/-2", "0x1/2", "1.0/2", "9999999999/99999999999"}) {
    try {
      parse_shard(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("--shard"), std::string::npos) << message;
      EXPECT_NE(message.find("0 <= I < N"), std::string::npos) << message;
      EXPECT_NE(message.find(std::string("'") + bad + "'"), std::string::npos) << message;
    }
  }
}

}  // namespace
}  // namespace tgemm
