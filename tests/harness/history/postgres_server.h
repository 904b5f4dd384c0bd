// A throw-away PostgreSQL server for the tests: initdb into a fresh directory (in /dev/shm when it
// has room, else /tmp), postgres listening on 127.0.0.1 only (a free port) and on a unix socket in
// that directory, run as the `postgres` system user when the tests run as root (initdb refuses
// root). Started once per test binary, on first use (so a binary run test by test, as ctest does,
// starts it only for the tests that need it); stopped and its directory removed when the binary
// ends (a gtest Environment), also after failed tests; if the binary is killed, the kernel stops
// the server (parent-death signal) and only the directory is left.
//   const auto url = tipbench::testing::PostgresServer::instance().fresh_database("my_test");
//   tipbench::history::HistoryStore store(url);
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <string>

namespace tipbench::testing {

class PostgresServer {
 public:
  static constexpr const char* kUser = "tipbench";               // the server's superuser
  static constexpr const char* kPassword = "pg-test-pw-9d4e1b";  // required over TCP (scram-sha-256)

  // The binary's server, started on the first call (about a second). Throws std::runtime_error
  // with the reason, the same one on every call: the binaries absent ("install postgresql-15
  // (scripts/bootstrap.sh --test)"), no `postgres` user under root, a server that does not start.
  static PostgresServer& instance();
  // Stops the server and removes its directory, if it was started (the Environment's TearDown).
  static void stop_if_started();

  // A new, empty database (its name made from `hint`, unique); its URL.
  std::string fresh_database(const std::string& hint);
  // postgresql://tipbench:PASSWORD@127.0.0.1:PORT/DATABASE: over TCP, so authentication is real.
  std::string url(const std::string& database) const;
  int port() const { return port_; }

  ~PostgresServer();
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;

 private:
  PostgresServer();
  void start_postgres();
  void stop();

  std::string bindir_, dir_;
  pid_t owner_;                         // the process that started it, the only one that stops it
  uid_t uid_ = static_cast<uid_t>(-1);  // the user the server runs as; -1: this process's
  gid_t gid_ = static_cast<gid_t>(-1);
  pid_t pid_ = -1;
  int port_ = 0;
  int databases_ = 0;
};

// The first column of the first row of `sql` run on the database at `url` ("" when no row).
// Throws std::runtime_error with the server's message. For tests that inspect or doctor a store.
std::string pg_value(const std::string& url, const std::string& sql);

}  // namespace tipbench::testing
