// SharedLaunchOrder without a GPU: the CUDA calls it makes, in order, through injected fakes.
// Each launch waits on the event recorded after the previous one (any stream) and records
// its own; a captured stream is left alone; errors stop the sequence and are returned; two
// host threads never launch at once.
#include "src/dispatch/shared_launch_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace tgemm {
namespace {

cudaStream_t stream(uintptr_t id) { return reinterpret_cast<cudaStream_t>(id); }
const cudaEvent_t kEvent = reinterpret_cast<cudaEvent_t>(uintptr_t(0xE0));

// Logs every call as text ("wait s2" and so on); fails the ones a test names.
struct FakeCuda {
  std::vector<std::string> log;
  cudaStream_t capturing = nullptr;
  cudaError_t create_error = cudaSuccess, wait_error = cudaSuccess, record_error = cudaSuccess;

  static std::string name(cudaStream_t s) {
    return "s" + std::to_string(reinterpret_cast<uintptr_t>(s));
  }
  StreamEventCalls calls() {
    StreamEventCalls c;
    c.is_capturing = [this](cudaStream_t s, cudaStreamCaptureStatus* status) {
      *status = s == capturing ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
      return cudaSuccess;
    };
    c.create = [this](cudaEvent_t* e) {
      log.push_back("create");
      *e = create_error == cudaSuccess ? kEvent : nullptr;
      return create_error;
    };
    c.wait = [this](cudaStream_t s, cudaEvent_t e) {
      log.push_back("wait " + name(s) + (e == kEvent ? "" : " on another event"));
      return wait_error;
    };
    c.record = [this](cudaEvent_t e, cudaStream_t s) {
      log.push_back("record " + name(s) + (e == kEvent ? "" : " of another event"));
      return record_error;
    };
    c.destroy = [this](cudaEvent_t e) { log.push_back(e == kEvent ? "destroy" : "destroy ?"); };
    return c;
  }
  // A launch that logs itself and returns `result`.
  std::function<cudaError_t()> launch(cudaStream_t s, cudaError_t result = cudaSuccess) {
    return [this, s, result] {
      log.push_back("launch " + name(s));
      return result;
    };
  }
};

using Log = std::vector<std::string>;

TEST(SharedLaunchOrder, each_launch_waits_on_the_one_before_whatever_its_stream) {
  FakeCuda cuda;
  {
    SharedLaunchOrder order(cuda.calls());
    EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1))), cudaSuccess);
    EXPECT_EQ(order.run(stream(2), cuda.launch(stream(2))), cudaSuccess);
    EXPECT_EQ(order.run(stream(2), cuda.launch(stream(2))), cudaSuccess);
    EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1))), cudaSuccess);
  }
  EXPECT_EQ(cuda.log, (Log{"create", "launch s1", "record s1",   //
                           "wait s2", "launch s2", "record s2",  //
                           "wait s2", "launch s2", "record s2",  //
                           "wait s1", "launch s1", "record s1", "destroy"}));
}

TEST(SharedLaunchOrder, a_stream_being_captured_is_not_ordered) {
  FakeCuda cuda;
  cuda.capturing = stream(3);
  SharedLaunchOrder order(cuda.calls());
  EXPECT_EQ(order.run(stream(3), cuda.launch(stream(3))), cudaSuccess);
  EXPECT_EQ(cuda.log, (Log{"launch s3"}));
  EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1))), cudaSuccess);
  EXPECT_EQ(order.run(stream(3), cuda.launch(stream(3))), cudaSuccess);
  EXPECT_EQ(cuda.log, (Log{"launch s3", "create", "launch s1", "record s1", "launch s3"}));
}

TEST(SharedLaunchOrder, a_failed_launch_records_nothing_and_the_next_waits_on_the_last_record) {
  FakeCuda cuda;
  SharedLaunchOrder order(cuda.calls());
  EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1), cudaErrorInvalidValue)),
            cudaErrorInvalidValue);
  EXPECT_EQ(order.run(stream(2), cuda.launch(stream(2))), cudaSuccess);  // nothing to wait on
  EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1), cudaErrorLaunchOutOfResources)),
            cudaErrorLaunchOutOfResources);
  EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1))), cudaSuccess);
  EXPECT_EQ(cuda.log, (Log{"create", "launch s1",     //
                           "launch s2", "record s2",  //
                           "wait s1", "launch s1",    //
                           "wait s1", "launch s1", "record s1"}));
}

TEST(SharedLaunchOrder, an_ordering_error_is_returned_and_nothing_is_launched) {
  FakeCuda cuda;
  cuda.create_error = cudaErrorMemoryAllocation;
  SharedLaunchOrder order(cuda.calls());
  EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1))), cudaErrorMemoryAllocation);
  EXPECT_EQ(cuda.log, (Log{"create"}));

  cuda.create_error = cudaSuccess;  // the event is created on the next call
  EXPECT_EQ(order.run(stream(1), cuda.launch(stream(1))), cudaSuccess);
  cuda.wait_error = cudaErrorInvalidResourceHandle;
  EXPECT_EQ(order.run(stream(2), cuda.launch(stream(2))), cudaErrorInvalidResourceHandle);
  cuda.wait_error = cudaSuccess;
  cuda.record_error = cudaErrorIllegalState;
  EXPECT_EQ(order.run(stream(2), cuda.launch(stream(2))), cudaErrorIllegalState);
  EXPECT_EQ(cuda.log, (Log{"create", "create", "launch s1", "record s1", "wait s2", "wait s2",
                           "launch s2", "record s2"}));
}

// Many host threads, two streams: the lock lets one launch through at a time.
TEST(SharedLaunchOrder, host_threads_take_turns) {
  FakeCuda cuda;
  StreamEventCalls calls = cuda.calls();
  calls.wait = [](cudaStream_t, cudaEvent_t) { return cudaSuccess; };
  calls.record = [](cudaEvent_t, cudaStream_t) { return cudaSuccess; };
  SharedLaunchOrder order(calls);
  std::atomic<int> inside{0}, most{0}, launches{0};
  auto launch = [&] {
    const int now = ++inside;
    most = std::max(most.load(), now);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    --inside;
    ++launches;
    return cudaSuccess;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) EXPECT_EQ(order.run(stream(1 + t % 2), launch), cudaSuccess);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(launches.load(), 160);
  EXPECT_EQ(most.load(), 1);
}

}  // namespace
}  // namespace tgemm
