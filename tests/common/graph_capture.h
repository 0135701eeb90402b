// A CUDA graph captured from what a test enqueues on a stream, instantiated, for the GPU tests
// of captured library calls.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "src/cuda/cuda_check.h"

namespace tgemm::testing {

class CapturedGraph {
 public:
  // Captures what `enqueue` puts on `stream` in `mode`. The capture is ended whatever
  // enqueue throws (then rethrown), so the stream is never left capturing.
  template <typename Enqueue>
  CapturedGraph(cudaStream_t stream, cudaStreamCaptureMode mode, Enqueue&& enqueue) {
    TGEMM_CUDA_CHECK(cudaStreamBeginCapture(stream, mode));
    try {
      enqueue();
    } catch (...) {
      cudaGraph_t dropped = nullptr;
      cudaStreamEndCapture(stream, &dropped);
      if (dropped) cudaGraphDestroy(dropped);
      throw;
    }
    TGEMM_CUDA_CHECK(cudaStreamEndCapture(stream, &graph_));
    TGEMM_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  ~CapturedGraph() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  void launch(cudaStream_t stream) const { TGEMM_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }
  // Kernel nodes and others, to check that a capture recorded the work.
  size_t nodes() const {
    size_t count = 0;
    TGEMM_CUDA_CHECK(cudaGraphGetNodes(graph_, nullptr, &count));
    return count;
  }

 private:
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace tgemm::testing
