// The history store in an embedded SQLite file: sql_database.h's statements through prepared
// statements, $N placeholders read as ?N.
#include "sql_database.h"
#include "store_schema.h"
#include "tipbench/history/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sqlite3.h>

#include <cctype>

namespace tipbench::history {

namespace {

// "... = $12" -> "... = ?12": SQLite's numbered parameters (no statement here has a '$' in a literal).
std::string with_sqlite_parameters(std::string sql) {
  for (std::size_t at = sql.find('$'); at != std::string::npos; at = sql.find('$', at + 1)) {
    if (at + 1 < sql.size() && std::isdigit(static_cast<unsigned char>(sql[at + 1]))) sql[at] = '?';
  }
  return sql;
}

// A prepared statement, finalized on every way out.
class Statement final : public SqlRow {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, with_sqlite_parameters(sql).c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  void bind(const SqlValues& params) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    for (int i = 0; i < static_cast<int>(params.size()); ++i) {
      const auto& v = params[static_cast<std::size_t>(i)];
      if (const auto* n = std::get_if<std::int64_t>(&v)) sqlite3_bind_int64(stmt_, i + 1, *n);
      if (const auto* x = std::get_if<double>(&v)) sqlite3_bind_double(stmt_, i + 1, *x);
      if (const auto* s = std::get_if<std::string>(&v)) {
        sqlite3_bind_text(stmt_, i + 1, s->c_str(), static_cast<int>(s->size()), SQLITE_TRANSIENT);
      }
    }
  }
  // True while a row is there; false when done. Throws StoreError on anything else.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    fail();
  }
  std::int64_t integer(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const override { return sqlite3_column_double(stmt_, column); }
  std::string text(int column) const override {
    const auto* p = sqlite3_column_text(stmt_, column);
    return p ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  [[noreturn]] void fail() const {
    const int code = sqlite3_errcode(db_);
    const std::string why = sqlite3_errmsg(db_);
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
      throw StoreError(fmt::format("{}: busy: another process held the store for 30 s ({})", path_, why));
    }
    throw StoreError(fmt::format("{}: {}", path_, why));
  }
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
};

class SqliteDatabase final : public SqlDatabase {
 public:
  explicit SqliteDatabase(const std::string& path);
  ~SqliteDatabase() override { sqlite3_close(db_); }
  SqliteDatabase(const SqliteDatabase&) = delete;
  SqliteDatabase& operator=(const SqliteDatabase&) = delete;

  void query(const std::string& sql, const SqlValues& params, const EachRow& each_row) const override {
    Statement statement(db_, sql, path_);
    statement.bind(params);
    while (statement.step()) each_row(statement);
  }
  // The write lock first (BEGIN IMMEDIATE): a second writer waits for it (the busy timeout).
  void begin_write() override { exec_script(db_, "BEGIN IMMEDIATE", path_); }
  void commit() override { exec_script(db_, "COMMIT", path_); }
  void rollback() noexcept override { sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr); }
  // One prepared statement, run once per row: in process, a row costs no round trip.
  void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                   const std::vector<SqlValues>& rows, OnConflict on_conflict) override {
    std::string placeholders;
    for (std::size_t i = 1; i <= columns.size(); ++i) placeholders += fmt::format("{}?{}", i > 1 ? ", " : "", i);
    Statement insert(db_,
                     fmt::format("INSERT {}INTO {}({}) VALUES({})", on_conflict == OnConflict::skip ? "OR IGNORE " : "",
                                 table, fmt::join(columns, ", "), placeholders),
                     path_);
    for (const auto& row : rows) {
      insert.bind(row);
      (void)insert.step();
    }
  }
  // The ids as a JSON array, read by SQLite's json_each.
  std::string is_one_of(const std::string& column, int param) const override {
    return fmt::format("{} IN (SELECT value FROM json_each(${}))", column, param);
  }
  SqlValue id_list(const std::vector<std::int64_t>& ids) const override {
    return fmt::format("[{}]", fmt::join(ids, ","));
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

SqliteDatabase::SqliteDatabase(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw StoreError(fmt::format("{}: cannot open the history store: {}", path, why));
  }
  try {
    prepare_store(db_, path_);
  } catch (...) {
    sqlite3_close(db_);
    throw;
  }
}

}  // namespace

std::unique_ptr<SqlDatabase> open_sqlite_database(const std::string& path) {
  return std::make_unique<SqliteDatabase>(path);
}

}  // namespace tipbench::history
