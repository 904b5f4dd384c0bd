// Internal to the history library: one libpq connection to a PostgreSQL server, with every failure
// a one-line StoreError that names the server by its URL, password masked.
//   PgConnection db("postgresql://tipbench:pw@host/db");   // StoreError: "postgresql://tipbench:***@host/db: ..."
//   const auto r = db.exec("SELECT id FROM runs WHERE content_sha256 = $1", {sha});
//   if (r.rows() > 0) id = r.integer(0, 0);
#pragma once

#include "libpq_api.h"
#include "tipbench/history/store.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tipbench::history {

// A query's rows, cleared on every way out. Values are libpq's text format.
class PgResult {
 public:
  PgResult(PGresult* r, const LibPq& pq) : pq_(&pq), r_(r, pq.clear) {}
  int rows() const { return pq_->ntuples(r_.get()); }
  bool null(int row, int column) const { return pq_->getisnull(r_.get(), row, column) != 0; }
  std::string text(int row, int column) const { return pq_->getvalue(r_.get(), row, column); }
  std::int64_t integer(int row, int column) const;
  double real(int row, int column) const;
  const PGresult* get() const { return r_.get(); }

 private:
  const LibPq* pq_;
  std::unique_ptr<PGresult, void (*)(PGresult*)> r_;
};

class PgConnection {
 public:
  // Connects (connect_timeout=10 unless the URL sets one). Throws StoreError "URL: cannot connect: ...".
  explicit PgConnection(const std::string& url);

  // One statement; its parameters travel apart from the SQL text (never quoted into it), each of
  // the type id in `types` when given (0 or none: the server infers it).
  // Throws StoreError "URL: <the server's message>" on any error.
  PgResult exec(const std::string& sql, const std::vector<std::string>& params = {},
                const std::vector<Oid>& types = {}) const;
  // Rolls back the open transaction, ignoring errors: the way out of a failed one.
  void rollback() const noexcept;
  // A one-line StoreError naming the server: "URL: what".
  [[noreturn]] void fail(const std::string& what) const;
  const std::string& shown_url() const { return shown_url_; }

 private:
  std::string one_line(std::string message) const;  // first line, password scrubbed
  std::string shown_url_;                           // the URL, password masked
  const LibPq* pq_;                                 // loaded before the connection is made
  std::string password_;                            // scrubbed from every message, to be sure
  std::unique_ptr<PGconn, void (*)(PGconn*)> conn_;
};

}  // namespace tipbench::history
