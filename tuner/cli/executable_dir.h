// Where the running tool lives: its helper programs (tgemm-worker, tgemm-profile-target) are
// built and installed beside it.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>

namespace tgemm::cli {

// The running executable's folder, or "." when /proc does not say.
inline std::string executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

}  // namespace tgemm::cli
