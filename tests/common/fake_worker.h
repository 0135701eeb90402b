// The fake tgemm-worker (tests/data/worker/fake_worker.sh) scripted from a test: a scratch
// folder it reads its answers from, and the answers the tests give most.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "tuner/evaluate/worker_protocol.h"

namespace tgemm::testing {

inline const std::string kFixtures = std::string(TGEMM_SOURCE_DIR) + "/tests/data/worker/";

// A scratch directory that scripts the fake worker through FAKE_WORKER_DIR.
class FakeWorkerDir {
 public:
  FakeWorkerDir() {
    std::string templ =
        (std::filesystem::temp_directory_path() / "tgemm-fake-worker-XXXXXX").string();
    if (!::mkdtemp(templ.data())) throw std::runtime_error("mkdtemp failed");
    path_ = templ;
    ::setenv("FAKE_WORKER_DIR", path_.c_str(), 1);
  }
  ~FakeWorkerDir() {
    ::unsetenv("FAKE_WORKER_DIR");
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  FakeWorkerDir(const FakeWorkerDir&) = delete;
  FakeWorkerDir& operator=(const FakeWorkerDir&) = delete;

  void write(const std::string& name, const std::string& content) const {
    std::ofstream(path_ + "/" + name, std::ios::binary) << content;
  }
  void answer(const std::string& kind, const WorkerResponse& response) const {
    write(kind + ".frame", encode_frame(encode_response(response)));
  }
  void remove(const std::string& name) const { std::filesystem::remove(path_ + "/" + name); }
  std::string read(const std::string& name) const {
    std::ifstream in(path_ + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

 private:
  std::string path_;
};

// cuBLAS timed at 11 us (median).
inline WorkerResponse prepared_ok() {
  CublasTiming t;
  t.ok = true;
  t.min_us = 10;
  t.median_us = 11;
  t.max_us = 12;
  t.runs = 20;
  return WorkerResponse{PrepareResponse{t}, false};
}

// A trial of `status` timed at 5.5 us (median) over 9 runs.
inline WorkerResponse evaluated(TrialStatus status, bool worker_exits = false) {
  TrialResult r;
  r.config = KernelConfig{"from_the_worker", {}};
  r.status = status;
  r.error = status == TrialStatus::ok ? "" : "fault\nin the kernel";
  r.time_median_us = 5.5;
  r.runs = 9;
  return WorkerResponse{EvaluateResponse{r}, worker_exits};
}

}  // namespace tgemm::testing
