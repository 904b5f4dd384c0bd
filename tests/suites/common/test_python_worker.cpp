// The Python worker (suites/common/python_worker.h, python/tipbench_worker): a real round trip
// through the project's Python, and every way a worker can go wrong (it cannot start, dies, is
// killed, hangs, prints what is not a reply, says it cannot run here or that a request failed),
// each an error naming the worker's log, never a crash or a wait without end.
#include "common/python_worker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <unistd.h>

namespace {

using tipbench::ArmUnavailable;
using tipbench::suites::PythonWorker;
using tipbench::suites::worker_launch;
using tipbench::suites::WorkerError;
using tipbench::suites::WorkerLaunch;
using namespace std::chrono_literals;

std::string log_path(const std::string& name) {
  return "/tmp/tipbench-test-worker-" + std::to_string(::getpid()) + "-" + name + ".log";
}

// The project's Python running `code` instead of the worker: a worker that misbehaves on purpose.
WorkerLaunch python_running(const std::string& code, const std::string& name) {
  WorkerLaunch launch = worker_launch(log_path(name));
  launch.argv = {launch.argv.at(0), "-c", code};
  return launch;
}

template <typename Error>
std::string error_of(PythonWorker& worker, const nlohmann::json& request, std::chrono::duration<double> timeout) {
  try {
    worker.request(request, timeout);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for " << request.dump();
  return "";
}

TEST(PythonWorker, ARoundTripPreparesTheReferenceModelAndTimesItsStepsWhereTheyRun) {
  PythonWorker worker(worker_launch(log_path("round-trip")));
  const auto hello = worker.request({{"op", "hello"}}, 120s);
  EXPECT_EQ(hello.at("protocol"), 2);
  EXPECT_EQ(hello.at("torch").get<std::string>().rfind("2.11.0", 0), 0u) << hello.dump();  // requirements.txt's pin
  const auto prepared = worker.request({{"op", "prepare"},
                                        {"device", "cpu"},
                                        {"model", "small_cnn"},
                                        {"image_size", 32},
                                        {"classes", 10},
                                        {"batch", 2},
                                        {"precision", "fp32"}},
                                       120s);
  // The C++ small_cnn's parameter count (models/src/model.cpp): the same model in both languages.
  EXPECT_EQ(prepared.at("info").at("parameters"), 391466);
  EXPECT_EQ(prepared.at("info").at("optimizer_impl"), "loop");  // torch.optim's own choice on a CPU
  worker.request({{"op", "step"}}, 60s);
  const auto timed = worker.request({{"op", "time"}, {"steps", 3}}, 60s);
  ASSERT_EQ(timed.at("step_times_ms").size(), 3u);
  EXPECT_EQ(timed.at("step_cpu_times_ms").size(), 3u);
  for (double ms : timed.at("step_times_ms")) EXPECT_GT(ms, 0);
  EXPECT_TRUE(timed.at("memory").is_object());
  // A bad request is answered with its error, and the worker goes on.
  const auto bad = error_of<WorkerError>(worker, {{"op", "time"}, {"steps", "three"}}, 60s);
  EXPECT_NE(bad.find("\"steps\" must be int"), std::string::npos) << bad;
  EXPECT_NE(bad.find(log_path("round-trip")), std::string::npos) << bad;
  EXPECT_EQ(worker.request({{"op", "time"}, {"steps", 1}}, 60s).at("step_times_ms").size(), 1u);
  std::remove(log_path("round-trip").c_str());
}

TEST(PythonWorker, AModelItCannotTrainIsUnavailableNotAFailure) {
  PythonWorker worker(worker_launch(log_path("unknown-model")));
  const auto why = error_of<ArmUnavailable>(worker,
                                            {{"op", "prepare"},
                                             {"device", "cpu"},
                                             {"model", "no_such_net"},
                                             {"image_size", 32},
                                             {"classes", 10},
                                             {"batch", 2},
                                             {"precision", "fp32"}},
                                            120s);
  EXPECT_NE(why.find("no_such_net is not one of tipbench's reference models"), std::string::npos) << why;
  std::remove(log_path("unknown-model").c_str());
}

TEST(PythonWorker, NoPythonThereMeansTheArmIsUnavailable) {
  WorkerLaunch launch = worker_launch(log_path("no-python"));
  launch.argv[0] = "/nonexistent/bin/python";
  try {
    PythonWorker worker(launch);
    FAIL() << "started a Python that does not exist";
  } catch (const ArmUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("TIPBENCH_PYTHON"), std::string::npos) << e.what();
  }
  std::remove(log_path("no-python").c_str());
}

TEST(PythonWorker, AWorkerThatExitsOrIsKilledIsAnErrorNamingItsLogAndItsLastWords) {
  {
    PythonWorker worker(
        python_running("import sys; sys.stdin.readline(); print('giving up', file=sys.stderr); sys.exit(3)", "exits"));
    const auto why = error_of<WorkerError>(worker, {{"op", "hello"}}, 60s);
    EXPECT_NE(why.find("exited with status 3"), std::string::npos) << why;
    EXPECT_NE(why.find(log_path("exits") + ": giving up"), std::string::npos) << why;
    EXPECT_NE(error_of<WorkerError>(worker, {{"op", "hello"}}, 60s).find("has ended"), std::string::npos);
  }
  {
    PythonWorker worker(python_running("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "killed"));
    const auto why = error_of<WorkerError>(worker, {{"op", "hello"}}, 60s);
    EXPECT_NE(why.find("killed by signal 9"), std::string::npos) << why;
  }
  std::remove(log_path("exits").c_str());
  std::remove(log_path("killed").c_str());
}

TEST(PythonWorker, AWorkerThatHangsIsKilledAtTheTimeout) {
  PythonWorker worker(python_running("import time; time.sleep(120)", "hangs"));
  const auto started = std::chrono::steady_clock::now();
  const auto why = error_of<WorkerError>(worker, {{"op", "hello"}}, 1s);
  EXPECT_NE(why.find("did not answer within 1 s; killed"), std::string::npos) << why;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 30s);  // not the worker's 120 s
  std::remove(log_path("hangs").c_str());
}

TEST(PythonWorker, WhatIsNotAReplyIsAnErrorAndAnUnavailableReplyASkip) {
  {
    PythonWorker worker(
        python_running("import sys; sys.stdin.readline(); print('Hello there!', flush=True)", "garbage"));
    const auto why = error_of<WorkerError>(worker, {{"op", "hello"}}, 60s);
    EXPECT_NE(why.find("answered what is not a reply (Hello there!)"), std::string::npos) << why;
  }
  {
    PythonWorker worker(python_running(
        "import sys; sys.stdin.readline(); print('{\"ok\": false, \"unavailable\": \"no torch here\"}', flush=True)",
        "unavailable"));
    EXPECT_EQ(error_of<ArmUnavailable>(worker, {{"op", "hello"}}, 60s), "no torch here");
  }
  std::remove(log_path("garbage").c_str());
  std::remove(log_path("unavailable").c_str());
}

}  // namespace
