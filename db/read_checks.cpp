#include "db/read_checks.h"

#include "src/core/library_log.h"
#include "src/templates/stored_config.h"

namespace tgemm {

bool ReadChecks::usable(const std::string& row, const std::optional<std::string>& why) {
  if (!why) return true;
  if (warned_.insert(row).second)
    library_log().warn("tgemm: tuning database '{}': {}: {}; skipped", path_, row, *why);
  return false;
}

std::optional<std::string> ReadChecks::config_rejection(int64_t kernel_id,
                                                        const KernelConfig& config,
                                                        const std::string& arch) {
  auto [it, fresh] = configs_.try_emplace({kernel_id, arch});
  if (fresh) it->second = stored_config_rejection(config, arch);
  return it->second;
}

}  // namespace tgemm
