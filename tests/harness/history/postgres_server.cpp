#include "postgres_server.h"

#include "scratch_dir.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

namespace tipbench::testing {

namespace {

constexpr const char* kInstall = "install postgresql-15 (scripts/bootstrap.sh --test)";

[[noreturn]] void fail(const std::string& why) { throw std::runtime_error("PostgreSQL test server: " + why); }

bool executable(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

// Where initdb and postgres are: $TIPBENCH_POSTGRES_BINDIR, Debian's PostgreSQL 15, or PATH.
std::string find_bindir() {
  if (const char* env = std::getenv("TIPBENCH_POSTGRES_BINDIR"); env && *env) {
    if (executable(std::string(env) + "/initdb") && executable(std::string(env) + "/postgres")) return env;
    fail(std::string("no initdb and postgres in $TIPBENCH_POSTGRES_BINDIR (") + env + "): " + kInstall);
  }
  std::vector<std::string> candidates = {"/usr/lib/postgresql/15/bin"};
  std::istringstream path(std::getenv("PATH") ? std::getenv("PATH") : "");
  for (std::string dir; std::getline(path, dir, ':');) candidates.push_back(dir);
  for (const auto& dir : candidates) {
    if (executable(dir + "/initdb") && executable(dir + "/postgres")) return dir;
  }
  fail(std::string("no initdb and postgres in /usr/lib/postgresql/15/bin or on PATH: ") + kInstall);
}

// The last lines of a log, on one line: why a server did not start.
std::string tail_of(const std::string& log) {
  std::istringstream in(read_bytes(log));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::string out;
  for (std::size_t i = lines.size() > 4 ? lines.size() - 4 : 0; i < lines.size(); ++i) out += " | " + lines[i];
  return out.empty() ? " (no output)" : out;
}

// A port nobody listens on now (the kernel's pick); the server may still lose it to a race: retried.
int free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(s, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    fail("no free port on 127.0.0.1");
  }
  ::close(s);
  return ntohs(a.sin_port);
}

// Starts args[0] as uid/gid (unless -1) in `dir`, its output to `log`. With die_with_parent the
// kernel sends it SIGINT (PostgreSQL's fast shutdown) should this process die first.
pid_t spawn(std::vector<std::string> args, const std::string& dir, const std::string& log, uid_t uid, gid_t gid,
            bool die_with_parent) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) fail("fork failed");
  if (pid > 0) return pid;
  // The child: async-signal-safe calls only, up to exec.
  const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  const int in = ::open("/dev/null", O_RDONLY);
  if (out < 0 || in < 0 || ::dup2(in, 0) < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) _exit(127);
  if (uid != static_cast<uid_t>(-1) && (::setgroups(1, &gid) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0)) {
    _exit(126);
  }
  // After setuid: a change of user clears the parent-death signal.
  if (die_with_parent && (::prctl(PR_SET_PDEATHSIG, SIGINT) != 0 || ::getppid() != parent)) _exit(125);
  if (::chdir(dir.c_str()) != 0) _exit(124);
  ::execv(argv[0], argv.data());
  _exit(127);
}

// Where the server's directory goes: not the scratch root, since the server's user must reach it
// and a unix socket's path must stay short (108 bytes). In memory when /dev/shm has room (a
// container's default 64 MiB has not): initdb and each CREATE DATABASE write megabytes, several
// times faster there than on a busy disk.
std::string server_parent() {
  struct statvfs fs {};
  const bool roomy = ::statvfs("/dev/shm", &fs) == 0 && fs.f_bavail * fs.f_frsize >= (1ull << 30);
  return roomy && ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
}

std::unique_ptr<PostgresServer>& the_server() {
  static std::unique_ptr<PostgresServer> server;
  return server;
}

std::string& the_failure() {
  static std::string failure;
  return failure;
}

// Stops the server after the last test, whatever the tests' outcome.
class StopServerAtTheEnd : public ::testing::Environment {
 public:
  void TearDown() override { PostgresServer::stop_if_started(); }
};
[[maybe_unused]] ::testing::Environment* const kStopServer =
    ::testing::AddGlobalTestEnvironment(new StopServerAtTheEnd);

}  // namespace

PostgresServer& PostgresServer::instance() {
  auto& server = the_server();
  if (!server && the_failure().empty()) {
    try {
      server.reset(new PostgresServer());
    } catch (const std::exception& e) {
      the_failure() = e.what();
    }
  }
  if (!server) throw std::runtime_error(the_failure());
  return *server;
}

void PostgresServer::stop_if_started() { the_server().reset(); }

PostgresServer::PostgresServer() : bindir_(find_bindir()), owner_(::getpid()) {
  if (::geteuid() == 0) {
    const passwd* pw = ::getpwnam("postgres");
    if (pw == nullptr) fail(std::string("running as root, the server needs the `postgres` system user: ") + kInstall);
    uid_ = pw->pw_uid;
    gid_ = pw->pw_gid;
  }
  const std::string base = server_parent();
  std::string pattern = base + "/tipbench-pg-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) fail("cannot make a directory under " + base);
  dir_ = pattern;
  try {
    if (uid_ != static_cast<uid_t>(-1) && ::chown(dir_.c_str(), uid_, gid_) != 0) fail("cannot chown " + dir_);
    const std::string pwfile = dir_ + "/password";
    write_bytes(pwfile, std::string(kPassword) + "\n");
    if (uid_ != static_cast<uid_t>(-1) && ::chown(pwfile.c_str(), uid_, gid_) != 0) fail("cannot chown " + pwfile);
    // Trust on the unix socket (only this directory's user and root reach it), a password over TCP.
    const std::string log = dir_ + "/initdb.log";
    const pid_t pid =
        spawn({bindir_ + "/initdb", "-D", dir_ + "/data", "-U", kUser, "--pwfile=" + pwfile, "--auth-local=trust",
               "--auth-host=scram-sha-256", "--no-sync", "--locale=C", "--encoding=UTF8", "--no-instructions"},
              dir_, log, uid_, gid_, false);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) fail("initdb failed:" + tail_of(log));
    start_postgres();
  } catch (...) {
    stop();
    throw;
  }
}

void PostgresServer::start_postgres() {
  const std::string log = dir_ + "/server.log";
  for (int attempt = 0; attempt < 3; ++attempt) {
    port_ = free_port();
    // Durability off: a throw-away server; the tests kill clients, never the server.
    pid_ = spawn({bindir_ + "/postgres", "-D", dir_ + "/data", "-p", std::to_string(port_), "-c",
                  "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=" + dir_, "-c", "fsync=off", "-c",
                  "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=40"},
                 dir_, log, uid_, gid_, true);
    const std::string ping = "host=127.0.0.1 port=" + std::to_string(port_) + " dbname=postgres connect_timeout=2";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      if (PQping(ping.c_str()) == PQPING_OK) return;
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ > 0) fail("postgres did not accept connections within 30 s:" + tail_of(log));
    if (read_bytes(log).find("could not bind") == std::string::npos) fail("postgres exited:" + tail_of(log));
  }
  fail("postgres found no free port in 3 tries:" + tail_of(log));
}

void PostgresServer::stop() {
  if (::getpid() != owner_) return;  // a test's forked child leaving: the server is its parent's
  if (pid_ > 0) {
    ::kill(pid_, SIGINT);  // fast shutdown: clients disconnected, no waiting for them
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }
  if (!dir_.empty()) remove_tree(dir_);
  dir_.clear();
}

PostgresServer::~PostgresServer() { stop(); }

std::string PostgresServer::url(const std::string& database) const {
  return "postgresql://" + std::string(kUser) + ":" + kPassword + "@127.0.0.1:" + std::to_string(port_) + "/" +
         database;
}

std::string PostgresServer::fresh_database(const std::string& hint) {
  std::string name = "t";  // appended, not "t" + ...: GCC 12 warns falsely (-Wrestrict) on that
  name += std::to_string(++databases_);
  name += '_';
  for (const char c : hint) name += std::isalnum(static_cast<unsigned char>(c)) ? std::tolower(c) : '_';
  name = name.substr(0, 63);  // PostgreSQL's identifier limit
  // Over the unix socket (trust): no password round trip per test.
  const std::string admin = "host=" + dir_ + " port=" + std::to_string(port_) + " user=" + kUser + " dbname=postgres";
  try {
    pg_value(admin, "CREATE DATABASE " + name + " STRATEGY FILE_COPY");  // PostgreSQL 15: a plain copy, fastest
  } catch (const std::runtime_error&) {
    pg_value(admin, "CREATE DATABASE " + name);  // an older server found on PATH
  }
  return url(name);
}

std::string pg_value(const std::string& url, const std::string& sql) {
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn(PQconnectdb(url.c_str()), &PQfinish);
  if (PQstatus(conn.get()) != CONNECTION_OK) throw std::runtime_error(PQerrorMessage(conn.get()));
  PQsetNoticeProcessor(
      conn.get(), [](void*, const char*) {}, nullptr);
  std::unique_ptr<PGresult, void (*)(PGresult*)> r(PQexec(conn.get(), sql.c_str()), &PQclear);
  const auto status = PQresultStatus(r.get());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    throw std::runtime_error(sql + ": " + PQerrorMessage(conn.get()));
  }
  return PQntuples(r.get()) > 0 && PQnfields(r.get()) > 0 ? PQgetvalue(r.get(), 0, 0) : "";
}

}  // namespace tipbench::testing
