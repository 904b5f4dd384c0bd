// The history store on a PostgreSQL server (a fleet's): sql_database.h's statements through libpq.
// Every value travels as a typed query parameter; many rows travel as arrays (one statement).
#include "postgres_connection.h"
#include "postgres_schema.h"
#include "sql_database.h"
#include "tipbench/history/store.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace tipbench::history {

namespace {

// PostgreSQL's type ids (pg_type.oid) of the values sent: libpq infers none of a number's type.
constexpr Oid kBigintOid = 20, kDoubleOid = 701, kInferredOid = 0;

// A PostgreSQL array literal of texts: {"a","b \"c\""} (every element quoted, " and \ escaped).
std::string text_array(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const auto& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (const char ch : item) {
      if (ch == '"' || ch == '\\') out += '\\';
      out += ch;
    }
    out += '"';
  }
  return out + "}";
}

// A value in libpq's text format, and its type; a double in its shortest exact text.
std::pair<std::string, Oid> as_parameter(const SqlValue& v) {
  if (const auto* n = std::get_if<std::int64_t>(&v)) return {std::to_string(*n), kBigintOid};
  if (const auto* x = std::get_if<double>(&v)) return {fmt::format("{}", *x), kDoubleOid};
  return {std::get<std::string>(v), kInferredOid};  // the column's type (text, JSON text) decides
}

const char* sql_type(const SqlValue& v) {
  if (std::holds_alternative<std::int64_t>(v)) return "bigint";
  return std::holds_alternative<double>(v) ? "double precision" : "text";
}

// One column of many rows as an array literal.
std::string as_array(const std::vector<SqlValues>& rows, std::size_t column) {
  if (std::holds_alternative<std::string>(rows.front()[column])) {
    std::vector<std::string> texts;
    for (const auto& row : rows) texts.push_back(std::get<std::string>(row[column]));
    return text_array(texts);
  }
  std::vector<std::string> numbers;
  for (const auto& row : rows) numbers.push_back(as_parameter(row[column]).first);
  return fmt::format("{{{}}}", fmt::join(numbers, ","));
}

class PgRow final : public SqlRow {
 public:
  PgRow(const PgResult& r, int row) : r_(r), row_(row) {}
  std::int64_t integer(int column) const override { return r_.integer(row_, column); }
  double real(int column) const override { return r_.real(row_, column); }
  std::string text(int column) const override { return r_.text(row_, column); }

 private:
  const PgResult& r_;
  int row_;
};

class PostgresDatabase final : public SqlDatabase {
 public:
  PostgresDatabase(const std::string& url, bool make_when_absent) : db_(url) {
    prepare_postgres_store(db_, make_when_absent);
  }

  void query(const std::string& sql, const SqlValues& params, const EachRow& each_row) const override {
    std::vector<std::string> values;
    std::vector<Oid> types;
    for (const auto& p : params) {
      auto [value, type] = as_parameter(p);
      values.push_back(std::move(value));
      types.push_back(type);
    }
    const auto r = db_.exec(sql, values, types);
    for (int i = 0; i < r.rows(); ++i) each_row(PgRow(r, i));
  }
  // The ingest lock first, as SQLite's BEGIN IMMEDIATE: two writers serialise, both land.
  void begin_write() override {
    db_.exec("BEGIN");
    db_.exec("SELECT pg_advisory_xact_lock($1::bigint)", {kIngestLock});
  }
  void commit() override { db_.exec("COMMIT"); }
  void rollback() noexcept override { db_.rollback(); }
  // Every row in one statement: a column per array, or one value when every row has the same (a
  // round trip per row cost 0.27 ms each: 217 ms per run of 400 cells, measured).
  void insert_rows(const std::string& table, const std::vector<std::string>& columns,
                   const std::vector<SqlValues>& rows, OnConflict on_conflict) override {
    if (rows.empty()) return;
    std::vector<std::string> values, selected, unnested, names;
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const bool same = std::all_of(rows.begin(), rows.end(), [&](const SqlValues& r) { return r[c] == rows[0][c]; });
      const std::string parameter = fmt::format("${}", values.size() + 1);
      if (same) {
        values.push_back(as_parameter(rows[0][c]).first);
        selected.push_back(fmt::format("{}::{}", parameter, sql_type(rows[0][c])));
      } else {
        values.push_back(as_array(rows, c));
        unnested.push_back(fmt::format("{}::{}[]", parameter, sql_type(rows[0][c])));
        names.push_back(fmt::format("c{}", c));
        selected.push_back(names.back());
      }
    }
    const std::string from =
        unnested.empty() ? ""
                         : fmt::format(" FROM unnest({}) AS t({})", fmt::join(unnested, ", "), fmt::join(names, ", "));
    db_.exec(fmt::format("INSERT INTO {}({}) SELECT {}{}{}", table, fmt::join(columns, ", "), fmt::join(selected, ", "),
                         from, on_conflict == OnConflict::skip ? " ON CONFLICT DO NOTHING" : ""),
             values);
  }
  std::string is_one_of(const std::string& column, int param) const override {
    return fmt::format("{} = ANY(${}::bigint[])", column, param);
  }
  SqlValue id_list(const std::vector<std::int64_t>& ids) const override {
    return fmt::format("{{{}}}", fmt::join(ids, ","));
  }

 private:
  PgConnection db_;
};

}  // namespace

std::unique_ptr<SqlDatabase> open_postgres_database(const std::string& url, bool make_when_absent) {
  return std::make_unique<PostgresDatabase>(url, make_when_absent);
}

}  // namespace tipbench::history
