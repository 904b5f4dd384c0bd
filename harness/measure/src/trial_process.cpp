// Fresh-process trials: the parent writes a request file, runs `<self> __trial REQUEST RESPONSE`
// and reads the response; the child rebuilds the same suite/case/arm from the registry.
#include "tipbench/measure/trial.h"

#include "tipbench/common/atomic_file.h"
#include "tipbench/suite/registry.h"

#include <ATen/core/CachingHostAllocator.h>
#include <c10/cuda/CUDACachingAllocator.h>

#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace tipbench {

namespace {

using ojson = nlohmann::ordered_json;

ojson context_to_json(const SuiteContext& c) {
  return {{"device", c.device.str()}, {"models", c.models},   {"batch_size", c.batch_size},      {"seed", c.seed},
          {"quick", c.quick},         {"options", c.options}, {"process_setup", c.process_setup}};
}

SuiteContext context_from_json(const ojson& j) {
  SuiteContext c;
  c.device = c10::Device(j.at("device").get<std::string>());
  c.models = j.at("models").get<std::vector<std::string>>();
  c.batch_size = j.at("batch_size").get<std::int64_t>();
  c.seed = j.at("seed").get<std::uint64_t>();
  c.quick = j.at("quick").get<bool>();
  c.options = j.at("options").get<SuiteOptionValues>();
  c.process_setup = j.at("process_setup");
  return c;
}

ojson read_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return ojson::parse(in);
}

// The parent's environment with `changes` set: NAME=value entries replaced or appended.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& changes) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    if (!changes.contains(entry.substr(0, entry.find('=')))) out.push_back(entry);
  }
  for (const auto& [name, value] : changes) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> null_terminated(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int run_child(const std::string& self, const std::string& request, const std::string& response,
              const std::map<std::string, std::string>& environment) {
  std::vector<std::string> args{self, "__trial", request, response};
  std::vector<std::string> env = child_environment(environment);
  std::vector<char*> argv = null_terminated(args), envp = null_terminated(env);
  pid_t pid = 0;
  if (int rc = ::posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), envp.data()); rc != 0) {
    throw std::runtime_error(fmt::format("cannot start trial process {}: {}", self, std::strerror(rc)));
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed for the trial process");
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}

}  // namespace

TrialOutcome run_trial_in_fresh_process(const std::string& self_executable, const Suite& suite,
                                        const SuiteContext& context, int case_index, int arm_index,
                                        const MeasureSettings& settings, int block, int position,
                                        const std::map<std::string, std::string>& environment) {
  std::string dir = (std::filesystem::temp_directory_path() / "tipbench-trial-XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) throw std::runtime_error("cannot create a directory for a trial process");
  const std::string request = dir + "/request.json";
  const std::string response = dir + "/response.json";
  ojson req = {{"suite", suite.name()},
               {"case_index", case_index},
               {"arm_index", arm_index},
               {"context", context_to_json(context)},
               {"settings", ojson(nlohmann::json(settings))},
               {"block", block},
               {"position", position}};
  write_file_atomically(request, req.dump());
  if (context.device.is_cuda()) {
    // The child shares the device: hand back what this process's caching allocators keep from
    // earlier trials (a largest-batch trial can leave tens of GB), as torch.cuda.empty_cache()
    // is for "so that those can be used by other GPU applications" (notes/cuda.rst).
    c10::cuda::CUDACachingAllocator::emptyCache();
    at::getHostAllocator(at::kCUDA)->empty_cache();
  }
  const int code = run_child(self_executable, request, response, environment);
  ojson res;
  if (::access(response.c_str(), F_OK) == 0) res = read_json(response);
  // Not std::filesystem::remove_all: the copy libtorch.so exports crashes on non-empty directories.
  std::remove(request.c_str());
  std::remove(response.c_str());
  ::rmdir(dir.c_str());
  if (res.contains("error")) {
    // The child's kind of error survives the process boundary: bad input stops the run, an
    // unavailable arm is skipped.
    if (res.value("input_error", false)) throw InputError(res.at("error").get<std::string>());
    if (res.value("unavailable", false)) throw ArmUnavailable(res.at("error").get<std::string>());
    throw std::runtime_error(res.at("error").get<std::string>());
  }
  if (code != 0 || !res.contains("trial")) {
    throw std::runtime_error(fmt::format("trial process exited with code {} and no result", code));
  }
  TrialOutcome outcome{trial_from_json(res.at("trial")), nlohmann::json::parse(res.at("info").dump()),
                       res.value("invalid_reason", std::string()), std::nullopt};
  if (res.contains("profile")) outcome.profile = profile_from_json(res.at("profile"));
  return outcome;
}

int serve_trial_request(const std::string& request_path, const std::string& response_path,
                        const std::function<void(const nlohmann::json&)>& setup) {
  // A trial outliving its run would hold the device: die with the parent (SIGTERM and kill -9 of
  // the parent reach only the parent).
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  ojson res;
  int code = 0;
  try {
    const ojson req = read_json(request_path);
    const Suite* suite = find_suite(req.at("suite").get<std::string>());
    if (suite == nullptr) throw std::runtime_error("unknown suite in trial request");
    const SuiteContext context = context_from_json(req.at("context"));
    if (setup) setup(context.process_setup);
    const auto cases = suite->cases(context);
    const auto& c = cases.at(req.at("case_index").get<std::size_t>());
    const auto& arm = c.arms.at(req.at("arm_index").get<std::size_t>());
    const auto settings = nlohmann::json::parse(req.at("settings").dump()).get<MeasureSettings>();
    auto outcome =
        run_trial(*suite, context, c, arm, settings, req.at("block").get<int>(), req.at("position").get<int>());
    res = {{"trial", trial_to_json(outcome.trial)},
           {"info", ojson(outcome.info)},
           {"invalid_reason", outcome.invalid_reason}};
    if (outcome.profile) res["profile"] = profile_to_json(*outcome.profile);
  } catch (const InputError& e) {
    res = {{"error", e.what()}, {"input_error", true}};
    code = 1;
  } catch (const ArmUnavailable& e) {
    res = {{"error", e.what()}, {"unavailable", true}};
    code = 1;
  } catch (const std::exception& e) {
    res = {{"error", e.what()}};
    code = 1;
  }
  write_file_atomically(response_path, res.dump());
  return code;
}

}  // namespace tipbench
