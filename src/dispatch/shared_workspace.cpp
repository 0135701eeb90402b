#include "src/dispatch/shared_workspace.h"

#include <fmt/format.h>

#include "src/dispatch/dispatch_errors.h"

namespace tgemm {

void SharedWorkspace::raise_needed(size_t bytes) {
  size_t seen = needed_.load();
  while (seen < bytes && !needed_.compare_exchange_weak(seen, bytes)) {
  }
}

void SharedWorkspace::hold(size_t bytes, const std::string& what) {
  raise_needed(bytes);
  Reservation reserved;
  order_.between_launches([&] { reserved = workspace_->reserve(bytes); });
  check(reserved, bytes, false, what);
  if (reserved.error != cudaSuccess)
    throw ExecutionError(fmt::format("{} needs {} bytes of workspace: {}", what, bytes,
                                     cudaGetErrorString(reserved.error)));
}

void SharedWorkspace::check(const Reservation& reserved, size_t bytes, bool capturing,
                            const std::string& what) const {
  if (!reserved.too_small) return;
  const size_t held = workspace_->bytes();
  if (workspace_->lent())
    throw WorkspaceTooSmallError(fmt::format(
        "{} needs {} bytes of workspace and the buffer set by tgemmSetWorkspace holds {}: lend "
        "one of at least tgemmGetWorkspaceSize's bytes after preparing every problem",
        what, bytes, held));
  throw NotPreparedError(fmt::format(
      "{} needs {} bytes of workspace and the handle holds {}{}: call tgemmPrepare with this "
      "problem before the capture, or lend a buffer with tgemmSetWorkspace",
      what, bytes, held, capturing ? ", which a capturing stream cannot allocate" : ""));
}

void SharedWorkspace::lend(void* ptr, size_t bytes) {
  order_.between_launches([&] { workspace_->lend(ptr, bytes); });
}

void SharedWorkspace::use_allocator(const WorkspaceAllocator& allocator) {
  order_.between_launches([&] { workspace_ = std::make_unique<DeviceWorkspace>(allocator); });
}

}  // namespace tgemm
