#include "tuner/output/output_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <mutex>

#include "src/core/error.h"

namespace tgemm {

namespace fs = std::filesystem;

namespace {

// The scratch folders alive now, as the signal handler sees them: only plain data, filled
// before `live` is set, so the handler reads nothing half made and calls only async-signal-safe
// functions (lseek, getdents64, unlinkat, rmdir, sigaction, raise).
struct Slot {
  std::atomic<bool> live{false};
  int fd = -1;  // the folder, open, so its entries can be listed and removed
  char path[PATH_MAX] = {};
};
constexpr int kSlots = 8;
Slot g_slots[kSlots];

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kSignalCount = int(std::size(kSignals));
struct sigaction g_previous[kSignalCount];
bool g_installed[kSignalCount] = {};
std::mutex g_mutex;  // guards registration (never taken by the handler)
int g_live = 0;

// Removes every file in the folder, then the folder. A listing may skip entries removed
// under it, so it goes round until a pass finds nothing.
void remove_slot_files(const Slot& slot) {
  alignas(dirent64) char buffer[4096];
  for (int pass = 0; pass < 8; ++pass) {
    bool removed = false;
    ::lseek(slot.fd, 0, SEEK_SET);
    for (ssize_t n; (n = ::getdents64(slot.fd, buffer, sizeof buffer)) > 0;) {
      for (ssize_t at = 0; at < n;) {
        const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
        at += entry->d_reclen;
        const char* name = entry->d_name;
        if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
        removed |= ::unlinkat(slot.fd, name, 0) == 0;
      }
    }
    if (!removed) break;
  }
  ::rmdir(slot.path);
}

void on_signal(int signal) {
  for (const Slot& slot : g_slots)
    if (slot.live.load()) remove_slot_files(slot);
  // Then the signal does what it did before: usually, end the process.
  for (int i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == signal) ::sigaction(signal, &g_previous[i], nullptr);
  ::raise(signal);
}

// Signals an ignoring parent left ignored (nohup's SIGHUP) stay ignored.
void install_handlers() {
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction action {};
    action.sa_handler = on_signal;
    sigfillset(&action.sa_mask);
    if (::sigaction(kSignals[i], nullptr, &g_previous[i]) != 0 ||
        g_previous[i].sa_handler == SIG_IGN)
      continue;
    g_installed[i] = ::sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

void restore_handlers() {
  for (int i = 0; i < kSignalCount; ++i) {
    if (g_installed[i]) ::sigaction(kSignals[i], &g_previous[i], nullptr);
    g_installed[i] = false;
  }
}

// The slot now watching `path`, or -1 when every slot is taken (the folder is then still
// removed on every exit but a signal).
int register_scratch(const std::string& path) {
  std::lock_guard lock(g_mutex);
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = g_slots[i];
    if (slot.live.load()) continue;
    slot.fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (slot.fd < 0) return -1;
    std::memcpy(slot.path, path.c_str(), path.size() + 1);
    slot.live.store(true);
    if (g_live++ == 0) install_handlers();
    return i;
  }
  return -1;
}

void unregister_scratch(int index) {
  std::lock_guard lock(g_mutex);
  Slot& slot = g_slots[index];
  slot.live.store(false);
  ::close(slot.fd);
  slot.fd = -1;
  if (--g_live == 0) restore_handlers();
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// OUT as the caller named it, once it is known to be a name a new file may take.
const std::string& checked_target(const std::string& out, Overwrite overwrite,
                                  const std::string& what) {
  if (out.empty()) fail("the {} needs a file name", what);
  struct stat st {};
  if (::lstat(out.c_str(), &st) != 0) {
    if (errno != ENOENT) fail("cannot write {} '{}': {}", what, out, std::strerror(errno));
    return out;
  }
  if (S_ISLNK(st.st_mode))
    fail(
        "{} '{}' is a symbolic link; a new file is written there only in place of a regular "
        "file, never through a link: remove the link or name the file it points to",
        what, out);
  if (S_ISDIR(st.st_mode)) fail("{} '{}' is a directory; name a file", what, out);
  if (overwrite == Overwrite::never)
    fail("{} '{}' exists and is never overwritten; name a new file", what, out);
  if (!S_ISREG(st.st_mode))
    fail("{} '{}' is not a regular file (a device, FIFO or socket); name a file", what, out);
  return out;
}

}  // namespace

ScratchDir::ScratchDir(const std::string& parent, const std::string& what) {
  std::error_code ec;
  std::string pattern = (fs::absolute(parent, ec) / ".tgemm-writing-XXXXXX").string();
  if (!::mkdtemp(pattern.data()))
    fail("cannot write {}: cannot make a scratch folder in '{}': {}", what, parent,
         std::strerror(errno));
  path_ = pattern;
  slot_ = register_scratch(path_);
}

ScratchDir::~ScratchDir() {
  if (slot_ >= 0) unregister_scratch(slot_);
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

OutputFile::OutputFile(const std::string& out, Overwrite overwrite, const std::string& what)
    : out_(out),
      what_(what),
      overwrite_(overwrite),
      dir_(folder_of(checked_target(out, overwrite, what)), what + " '" + out + "'"),
      scratch_(dir_.file(fs::path(out).filename().string())) {}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
}

void OutputFile::append(std::string_view text) {
  if (fd_ < 0) {
    fd_ = ::open(scratch_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd_ < 0) fail("cannot write {} '{}': {}", what_, out_, std::strerror(errno));
  }
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write {} '{}': {}", what_, out_, std::strerror(n < 0 ? errno : EIO));
    text.remove_prefix(size_t(n));
  }
}

// A full disk may show only now, when the last blocks are written out.
void OutputFile::close_scratch() {
  const int fd = fd_;
  fd_ = -1;
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  if (::close(fd) != 0 || !synced)
    fail("cannot write {} '{}': {}", what_, out_, std::strerror(synced ? errno : err));
}

void OutputFile::commit() {
  if (fd_ >= 0) close_scratch();
  // link() never replaces an OUT that appeared meanwhile; rename() replaces a file (or a link
  // planted since the check, never what it points to).
  const bool moved = overwrite_ == Overwrite::never ? ::link(scratch_.c_str(), out_.c_str()) == 0
                                                    : ::rename(scratch_.c_str(), out_.c_str()) == 0;
  if (!moved) fail("cannot create {} '{}': {}", what_, out_, std::strerror(errno));
}

void write_output_file(const std::string& out, std::string_view text, Overwrite overwrite,
                       const std::string& what) {
  OutputFile file(out, overwrite, what);
  file.append(text);
  file.commit();
}

}  // namespace tgemm
