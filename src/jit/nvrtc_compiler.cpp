#include "src/jit/nvrtc_compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <memory>

#include "src/core/arch_limits.h"
#include "src/core/error.h"
#include "src/core/hash.h"
#include "src/jit/code_hash.h"
#include "src/jit/cubin_resources.h"

namespace tgemm {

namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram* p) const {
    nvrtcDestroyProgram(p);
    delete p;
  }
};
using ProgramPtr = std::unique_ptr<nvrtcProgram, ProgramDeleter>;

std::string program_log(nvrtcProgram program) {
  size_t size = 0;
  if (nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return "";
  std::string log(size, '\0');
  nvrtcGetProgramLog(program, log.data());
  log.resize(size - 1);  // drop the terminating NUL
  return log;
}

// CPU time of the calling thread: NVRTC compiles on it, so against the wall time it tells
// a compile that waited (a lock, a busy machine) from one that ran slowly.
double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

// How long the calling thread has been runnable but not running (Linux schedstat's second
// field, in ns); 0 where the kernel does not report it.
double thread_run_delay_ms() {
  std::ifstream stat("/proc/thread-self/schedstat");
  double on_cpu_ns = 0, waiting_ns = 0;
  if (!(stat >> on_cpu_ns >> waiting_ns)) return 0;
  return waiting_ns / 1e6;
}

// The arch an arch-specific target ("sm_90a") runs on ("sm_90"); other archs unchanged.
std::string base_arch(const std::string& arch) {
  if (arch.size() > 4 && arch.back() == 'a') return arch.substr(0, arch.size() - 1);
  return arch;
}

}  // namespace

std::string NvrtcCompiler::version() {
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  return fmt::format("{}.{}", major, minor);
}

std::vector<std::string> NvrtcCompiler::options(const std::vector<std::string>& defines,
                                                const std::string& arch) {
  try {
    arch_number(base_arch(arch));
  } catch (const Error&) {  // name the arch as given, not its stripped form
    fail("bad arch '{}' (expected sm_XY or sm_XYa)", arch);
  }
  // A real arch (sm_XY, not compute_XY) makes NVRTC emit a cubin: nothing is left to the driver.
  std::vector<std::string> opts = {"-arch=" + arch, "-std=c++17", "-Xptxas=-v"};
  opts.insert(opts.end(), defines.begin(), defines.end());
  return opts;
}

std::string NvrtcCompiler::cache_key(const KernelSource& source,
                                     const std::vector<std::string>& defines,
                                     const std::string& arch) {
  return stable_hash(fmt::format("{}|{}|{}|{}", source.hash, fmt::join(options(defines, arch), " "),
                                 arch, version()));
}

CompiledKernel NvrtcCompiler::compile(const KernelSource& source,
                                      const std::vector<std::string>& defines,
                                      const std::string& entry, const std::string& arch,
                                      const std::string& display_name) {
  CompiledKernel out;
  out.entry = entry;
  out.arch = arch;
  out.nvrtc_version = version();
  std::vector<std::string> opts;
  try {
    opts = options(defines, arch);
  } catch (const std::exception& e) {
    out.error = e.what();
    return out;
  }
  out.options = fmt::format("{}", fmt::join(opts, " "));
  out.cache_key = cache_key(source, defines, arch);

  auto started = std::chrono::steady_clock::now();
  const double cpu_started = thread_cpu_ms();
  const double wait_started = thread_run_delay_ms();
  ProgramPtr program(new nvrtcProgram(nullptr));
  std::string file_name = source.name + ".cu";
  std::vector<const char*> header_texts, header_names;
  for (const NamedHeader& h : source.headers) {
    header_texts.push_back(h.text.c_str());
    header_names.push_back(h.include_name.c_str());
  }
  nvrtcResult rc =
      nvrtcCreateProgram(program.get(), source.text.c_str(), file_name.c_str(),
                         int(header_texts.size()), header_texts.data(), header_names.data());
  if (rc != NVRTC_SUCCESS) {
    out.error = fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(rc));
    return out;
  }
  std::vector<const char*> argv;
  argv.reserve(opts.size());
  for (auto& o : opts) argv.push_back(o.c_str());
  rc = nvrtcCompileProgram(*program, int(argv.size()), argv.data());
  out.log = program_log(*program);
  out.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  out.compile_cpu_ms = thread_cpu_ms() - cpu_started;
  out.compile_wait_ms = std::max(0.0, thread_run_delay_ms() - wait_started);
  if (rc != NVRTC_SUCCESS) {
    out.error = fmt::format("NVRTC failed to compile {} ({}) with options [{}]:\n{}", display_name,
                            nvrtcGetErrorString(rc), out.options, out.log);
    return out;
  }
  size_t size = 0;
  nvrtcGetCUBINSize(*program, &size);
  out.cubin.resize(size);
  if (size == 0 || nvrtcGetCUBIN(*program, out.cubin.data()) != NVRTC_SUCCESS) {
    out.error = fmt::format("NVRTC produced no cubin for {} ({})", display_name, arch);
    return out;
  }
  out.code_hash = cubin_code_hash(out.cubin);
  out.resources = parse_ptxas_log(out.log, out.entry);
  if (!out.resources.found)
    out.resources = read_cubin_resources(out.cubin, out.entry, base_arch(arch));
  out.ok = true;
  return out;
}

}  // namespace tgemm
