#include "src/dispatch/problem_recorder.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "src/core/error.h"

namespace tgemm {

namespace {

// Concurrency and crash safety of one record file:
// - every writer (thread or process) merges under an exclusive flock on "<path>.lock", a
//   file of its own, because the record file itself is replaced by rename and a lock on it
//   would be held on an inode that is no longer the file;
// - a writer reads the file, merges its counts, writes "<path>.tmp.<pid>" and renames it over
//   the file, so readers and a process killed mid-write only ever see a complete file.
constexpr const char* kHeader =
    "# Problems served without an exact tuned entry (libtgemm record mode).\n"
    "# Tune them with: tgemm-tune --shapes <this file>\n"
    "# `calls` counts the calls recorded; the comment gives the first call's leading\n"
    "# dimensions, alignments in bytes of A.B.C and beta == 0, which the format does not key on.\n"
    "shapes:\n";
constexpr const char* kEntryPrefix = "  - ";
constexpr const char* kCallsField = ", calls: ";

struct RecordedShape {
  std::string entry;
  int64_t calls = 0;
  std::string details;
};

// An exclusive flock on "<path>.lock", released on destruction.
class RecordLock {
 public:
  explicit RecordLock(const std::string& path) : lock_path_(path + ".lock") {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fail("cannot create the lock file {}: {}", lock_path_, std::strerror(errno));
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd_);
      fail("cannot lock {}: {}", lock_path_, std::strerror(err));
    }
  }
  ~RecordLock() { ::close(fd_); }  // closing releases the flock
  RecordLock(const RecordLock&) = delete;
  RecordLock& operator=(const RecordLock&) = delete;

 private:
  std::string lock_path_;
  int fd_ = -1;
};

// A line this recorder wrote: "  - <entry>, calls: N}  # details". Other lines (hand edits)
// are kept as they are.
bool parse_entry_line(const std::string& line, std::string* entry, int64_t* calls) {
  if (line.rfind(kEntryPrefix, 0) != 0) return false;
  const size_t field = line.find(kCallsField);
  if (field == std::string::npos) return false;
  char* end = nullptr;
  const long long value = std::strtoll(line.c_str() + field + std::strlen(kCallsField), &end, 10);
  if (end == nullptr || *end != '}' || value < 0) return false;
  *entry = line.substr(std::strlen(kEntryPrefix), field - std::strlen(kEntryPrefix));
  *calls = value;
  return true;
}

std::string entry_line(const std::string& entry, int64_t calls, const std::string& details) {
  return fmt::format("{}{}{}{}}}  # {}", kEntryPrefix, entry, kCallsField, calls, details);
}

std::vector<std::string> read_lines(const std::string& path) {
  std::vector<std::string> lines;
  std::ifstream in(path);
  if (!in) {
    if (errno != ENOENT) fail("cannot read {}: {}", path, std::strerror(errno));
    return lines;
  }
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

void write_file_atomically(const std::string& path, const std::vector<std::string>& lines) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    for (const auto& line : lines) out << line << '\n';
    out.flush();
    if (!out) fail("cannot write {}: {}", tmp, std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail("cannot replace {}: {}", path, std::strerror(err));
  }
}

void merge_into_shape_file(const std::string& path, const std::vector<RecordedShape>& shapes) {
  RecordLock lock(path);
  std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) {
    std::istringstream header(kHeader);
    for (std::string line; std::getline(header, line);) lines.push_back(line);
  }
  std::map<std::string, size_t> line_of_entry;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string entry;
    int64_t calls = 0;
    if (parse_entry_line(lines[i], &entry, &calls)) line_of_entry.emplace(entry, i);
  }
  for (const RecordedShape& shape : shapes) {
    auto it = line_of_entry.find(shape.entry);
    if (it == line_of_entry.end()) {
      line_of_entry.emplace(shape.entry, lines.size());
      lines.push_back(entry_line(shape.entry, shape.calls, shape.details));
      continue;
    }
    std::string& line = lines[it->second];
    std::string entry;
    int64_t calls = 0;
    parse_entry_line(line, &entry, &calls);
    const size_t comment = line.find("  # ");
    line = entry_line(entry, calls + shape.calls,
                      comment == std::string::npos ? shape.details : line.substr(comment + 4));
  }
  write_file_atomically(path, lines);
}

std::string call_details(const Problem& p) {
  std::string details = fmt::format("ld {}.{}.{} align {}.{}.{} beta0 {}", p.lda, p.ldb, p.ldc,
                                    p.align_a, p.align_b, p.align_c, p.beta_zero ? 1 : 0);
  if (p.batch > 1 && !p.batch_pointers)
    details += fmt::format(" stride {}.{}.{}", p.stride_a, p.stride_b, p.stride_c);
  if (p.batch_pointers) details += " pointer arrays";
  return details;
}

}  // namespace

std::string shape_entry(const Problem& p) {
  // GemmTypes::name() is the shape file's `dtype`, with "_out_<type>" when C differs.
  const std::string name = p.types.name();
  const size_t out = name.find("_out_");
  std::string entry = fmt::format("{{m: {}, n: {}, k: {}, dtype: {}, layout: {}", p.m, p.n, p.k,
                                  name.substr(0, out), p.layout());
  if (out != std::string::npos) entry += ", out: " + name.substr(out + 5);
  // A strided batch is tuned packed (its strides, as its leading dimensions, are in the
  // comment); pointer arrays are tuned as the strided batch of their shape.
  if (p.batch > 1) entry += fmt::format(", batch: {}", p.batch);
  // An epilogue is tuned into C (a D apart is served from it); aux needs an activation.
  const Epilogue& e = p.epilogue;
  if (e.activation != Activation::none || e.bias != BiasAlong::none) {
    entry += ", epilogue: " + e.kind();
    if (e.bias == BiasAlong::m) entry += ", bias_along: m";
    if (e.bias_f32) entry += ", bias_type: f32";
    if (e.aux) entry += ", aux: true";
  }
  return entry;
}

ProblemRecorder::~ProblemRecorder() { stop(); }

void ProblemRecorder::start(const std::string& path) {
  stop();
  if (path.empty()) return;
  RecordLock probe(path);  // a folder we cannot write fails here, not on the first call
  std::lock_guard lock(mutex_);
  path_ = path;
  active_ = true;
}

void ProblemRecorder::stop() {
  std::lock_guard lock(mutex_);
  flush_locked();
  active_ = false;
  path_.clear();
  shapes_.clear();
}

std::string ProblemRecorder::path() const {
  std::lock_guard lock(mutex_);
  return path_;
}

void ProblemRecorder::note(const Problem& p) {
  if (!active()) return;
  std::lock_guard lock(mutex_);
  if (!active()) return;
  const Epilogue& e = p.epilogue;
  const ShapeKey key{p.m,    p.n,    p.k,     p.types.a,    p.types.b, p.types.c,  p.types.compute,
                     p.op_a, p.op_b, p.batch, e.activation, e.bias,    e.bias_f32, e.aux};
  try {
    auto [it, is_new] = shapes_.try_emplace(key);
    ++it->second.calls;
    if (!is_new) return;
    it->second.entry = shape_entry(p);
    it->second.details = call_details(p);
  } catch (const std::exception& e) {  // out of memory: the call itself must still run
    disable(e.what());
    return;
  }
  flush_locked();
}

void ProblemRecorder::flush() {
  std::lock_guard lock(mutex_);
  flush_locked();
}

void ProblemRecorder::flush_locked() {
  if (!active() || path_.empty()) return;
  std::vector<RecordedShape> pending;
  for (const auto& [key, shape] : shapes_)
    if (shape.calls > 0) pending.push_back({shape.entry, shape.calls, shape.details});
  if (pending.empty()) return;
  try {
    merge_into_shape_file(path_, pending);
    for (auto& [key, shape] : shapes_) shape.calls = 0;
  } catch (const std::exception& e) {
    disable(e.what());
  }
}

void ProblemRecorder::disable(const std::string& why) {
  // Recording must never fail a GEMM call: say why once, on stderr, and stop.
  std::fprintf(stderr, "tgemm: warning: record mode stopped: %s\n", why.c_str());
  active_ = false;
}

void start_from_environment(ProblemRecorder& recorder) {
  const char* path = std::getenv("TGEMM_RECORD");
  if (!path || !*path) return;
  try {
    recorder.start(path);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tgemm: warning: TGEMM_RECORD=%s not used: %s\n", path, e.what());
  }
}

ProblemRecorder& problem_recorder() {
  // Leaked, with an atexit flush: dispatchers destroyed by later static destructors may still
  // note calls, and must find it alive.
  static ProblemRecorder* recorder = [] {
    auto* r = new ProblemRecorder;
    start_from_environment(*r);
    std::atexit([] { problem_recorder().flush(); });
    return r;
  }();
  return *recorder;
}

}  // namespace tgemm
