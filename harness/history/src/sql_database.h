// Internal to the history library: what a database gives the store. Every statement, the ingest
// policy and every row loop are written once, against this (store_ingest.cpp, store_queries.cpp);
// a backend supplies only execution, the write transaction, bulk inserts and its dialect strings
// (sqlite_database.cpp, postgres_database.cpp).
//   db.query("SELECT id FROM runs WHERE content_sha256 = $1", {sha}, [&](const SqlRow& row) { id = row.integer(0); });
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace tipbench::history {

using SqlValue = std::variant<std::int64_t, double, std::string>;
using SqlValues = std::vector<SqlValue>;

// One row of a result, its columns by position.
class SqlRow {
 public:
  virtual std::int64_t integer(int column) const = 0;
  virtual double real(int column) const = 0;  // exactly as stored
  virtual std::string text(int column) const = 0;

 protected:
  ~SqlRow() = default;
};
using EachRow = std::function<void(const SqlRow&)>;

// What inserting a row whose unique key is taken does.
enum class OnConflict { fail, skip };

class SqlDatabase {
 public:
  virtual ~SqlDatabase() = default;
  // One statement with parameters $1, $2, ... (they travel apart from the SQL text); each row of
  // its result to `each_row`, in order. Throws StoreError naming the store.
  virtual void query(const std::string& sql, const SqlValues& params, const EachRow& each_row) const = 0;
  // The store's write transaction: two writers serialise (the second waits up to 30 s), both land.
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
  // Rows of values for `columns` of `table`, in as few round trips as the database allows.
  virtual void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                           const std::vector<SqlValues>& rows, OnConflict on_conflict) = 0;
  // The condition "`column` is one of the ids bound as parameter $`param`" and the value to bind
  // for those ids: one statement for any number of them.
  virtual std::string is_one_of(const std::string& column, int param) const = 0;
  virtual SqlValue id_list(const std::vector<std::int64_t>& ids) const = 0;

  void exec(const std::string& sql, const SqlValues& params = {}) const {
    query(sql, params, [](const SqlRow&) {});
  }
  // The first column of the first row; none when there is no row.
  std::optional<std::int64_t> first_integer(const std::string& sql, const SqlValues& params) const;
  // `body` inside the write transaction: committed when it returns, rolled back when it throws.
  void in_write_transaction(const std::function<void()>& body);
};

std::unique_ptr<SqlDatabase> open_sqlite_database(const std::string& path);
std::unique_ptr<SqlDatabase> open_postgres_database(const std::string& url, bool make_when_absent);

}  // namespace tipbench::history
