// TempDir: a fresh folder per test, removed afterwards. Unique per process and object, so
// tests that run in parallel (ctest -j) or several in one test never share a folder.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace tgemm::testing {

class TempDir {
 public:
  explicit TempDir(const std::string& tag = "test") {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tgemm_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++) +
             "_" + std::to_string(std::random_device{}()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Writes `text` to `name` in the folder; returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name)) << text;
    return file(name);
  }

 private:
  std::filesystem::path path_;
};

}  // namespace tgemm::testing
