// The shape files shipped in configs/shapes, sorted: tests that must hold for every one.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace tgemm::testing {

inline std::vector<std::string> shipped_shape_files() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(TGEMM_SOURCE_DIR "/configs/shapes"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tgemm::testing
