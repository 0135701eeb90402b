// What the tools write: every output file is built under a scratch name in a private folder
// beside it and moved into place only when complete, so an output is never half written, never
// written through a planted link, and nothing is left behind on failure or on SIGINT, SIGTERM
// or SIGHUP.
#pragma once

#include <string>
#include <string_view>

namespace tgemm {

// A private folder (mkdtemp: mode 0700, a name nobody can predict), removed with everything in
// it when this object goes. While it lives, SIGINT, SIGTERM and SIGHUP remove it too and then
// end the process as the signal would have. Throws Error naming `parent` when it cannot be made.
class ScratchDir {
 public:
  ScratchDir(const std::string& parent, const std::string& what);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
  int slot_ = -1;  // its entry in the signal handler's table
};

// May OUT exist already? A database is never replaced; a report or an export may replace a
// regular file (never a link, a directory or a device).
enum class Overwrite { never, regular_file };

// A new file OUT. Write it through append() or, for SQLite, at scratch_path(); commit() moves it
// into place (rename, or link for Overwrite::never so that an OUT made meanwhile is kept). Until
// then, and when commit() is never reached, OUT is untouched. `what` names the file in messages
// ("report file", "merge").
class OutputFile {
 public:
  // Throws Error when OUT is a symbolic link, a directory or another non-regular file, or
  // exists and `overwrite` is never.
  OutputFile(const std::string& out, Overwrite overwrite, const std::string& what);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  // Where the scratch file is (not created until append() or a caller such as SQLite makes it).
  const std::string& scratch_path() const { return scratch_; }
  // Appends to the scratch file, created exclusive and no-follow on first use; a failed write
  // (a full disk) throws Error.
  void append(std::string_view text);
  void commit();

 private:
  void close_scratch();

  std::string out_, what_;
  Overwrite overwrite_;
  ScratchDir dir_;
  std::string scratch_;
  int fd_ = -1;
};

// OUT holds exactly `text`, or is as it was when this throws.
void write_output_file(const std::string& out, std::string_view text, Overwrite overwrite,
                       const std::string& what);

}  // namespace tgemm
