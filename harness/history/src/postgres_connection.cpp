#include "postgres_connection.h"

#include "tipbench/history/store.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>
#include <regex>

namespace tipbench::history {

namespace {

// SQLSTATE lock_not_available: lock_timeout expired while waiting for another ingest.
constexpr const char* kLockTimeout = "55P03";

}  // namespace

namespace {

// libpq's own reading of the URI (fe-connect.c, conninfo_uri_parse_options): the user info ends
// at the first '@' before any '/' ('?' and '#' may be part of a password), and a query value at
// the next '&'. Masks user:PASSWORD@ and the password and sslpassword parameters.
std::string mask_as_libpq_reads(const std::string& url) {
  std::string out = url;
  if (const auto scheme = out.find("://"); scheme != std::string::npos) {
    const auto start = scheme + 3;
    const auto end = out.find_first_of("@/", start);
    if (end != std::string::npos && out[end] == '@') {
      const auto colon = out.find(':', start);
      if (colon < end) out.replace(colon + 1, end - colon - 1, "***");
    }
  }
  static const std::regex secret_parameter(R"(([?&](?:ssl)?password=)[^&]*)", std::regex::icase);
  return std::regex_replace(out, secret_parameter, "$1***");
}

}  // namespace

std::string mask_password(const std::string& url) {
  if (!is_postgres_url(url)) return url;
  std::string out = mask_as_libpq_reads(url);
  // Then whatever libpq itself parses as a password (when it is here): any of it left is masked.
  try {
    const LibPq& pq = libpq(out);
    if (PQconninfoOption* options = pq.conninfoParse(url.c_str(), nullptr)) {
      for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
        const std::string keyword = o->keyword;
        if (o->val == nullptr || o->val[0] == '\0' || (keyword != "password" && keyword != "sslpassword")) continue;
        for (auto at = out.find(o->val); at != std::string::npos; at = out.find(o->val, at + 3)) {
          out.replace(at, std::strlen(o->val), "***");
        }
      }
      pq.conninfoFree(options);
    }
  } catch (const StoreError&) {
    // No libpq here: the lexical rule above is libpq's.
  }
  return out;
}

std::int64_t PgResult::integer(int row, int column) const {
  const std::string v = text(row, column);
  std::int64_t out = 0;
  std::from_chars(v.data(), v.data() + v.size(), out);
  return out;
}

double PgResult::real(int row, int column) const {
  const std::string v = text(row, column);  // shortest exact text (extra_float_digits > 0): round-trips
  double out = 0;
  std::from_chars(v.data(), v.data() + v.size(), out);
  return out;
}

PgConnection::PgConnection(const std::string& url)
    : shown_url_(mask_password(url)), pq_(&libpq(shown_url_)), conn_(nullptr, pq_->finish) {
  if (PQconninfoOption* options = pq_->conninfoParse(url.c_str(), nullptr)) {
    for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (o->val != nullptr && std::string(o->keyword) == "password") password_ = o->val;
    }
    pq_->conninfoFree(options);
  }
  // Settings before "dbname" are defaults the URL's own (expanded from dbname) override: an
  // unreachable server fails in bounded time unless the URL asks for another bound.
  const char* keywords[] = {"connect_timeout", "client_encoding", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "UTF8", "tipbench", url.c_str(), nullptr};
  conn_.reset(pq_->connectdbParams(keywords, values, /*expand_dbname=*/1));
  if (!conn_) fail("cannot connect: out of memory");
  if (pq_->status(conn_.get()) != CONNECTION_OK) fail("cannot connect: " + std::string(pq_->errorMessage(conn_.get())));
  // The server's notices (and warnings) are not for the user's terminal: libpq prints them by default.
  pq_->setNoticeProcessor(
      conn_.get(), [](void*, const char*) {}, nullptr);
  // Wait for another ingest as the SQLite store does (30 s), and read doubles back exactly.
  exec("SET lock_timeout = '30s'; SET extra_float_digits = 3");
}

PgResult PgConnection::exec(const std::string& sql, const std::vector<std::string>& params,
                            const std::vector<Oid>& types) const {
  std::vector<const char*> values;
  for (const auto& p : params) values.push_back(p.c_str());
  // No parameters: PQexec, which also runs a script of several statements (the schema).
  PgResult r(params.empty()
                 ? pq_->exec(conn_.get(), sql.c_str())
                 : pq_->execParams(conn_.get(), sql.c_str(), static_cast<int>(values.size()),
                                   types.empty() ? nullptr : types.data(), values.data(), nullptr, nullptr, 0),
             *pq_);
  const PGresult* raw = r.get();
  const auto status = raw ? pq_->resultStatus(raw) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return r;
  const char* state = raw ? pq_->resultErrorField(raw, PG_DIAG_SQLSTATE) : nullptr;
  const char* primary = raw ? pq_->resultErrorField(raw, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  const std::string why = primary ? primary : pq_->errorMessage(conn_.get());  // libpq's own: connection lost
  if (state != nullptr && std::string(state) == kLockTimeout) {
    fail("busy: another process held the store for 30 s (" + why + ")");
  }
  fail(why);
}

void PgConnection::rollback() const noexcept { pq_->clear(pq_->exec(conn_.get(), "ROLLBACK")); }

void PgConnection::fail(const std::string& what) const { throw StoreError(shown_url_ + ": " + one_line(what)); }

std::string PgConnection::one_line(std::string message) const {
  message = message.substr(0, message.find('\n'));
  while (!message.empty() && std::isspace(static_cast<unsigned char>(message.back()))) message.pop_back();
  // libpq never echoes a password; scrubbed anyway, in case a message ever does.
  if (!password_.empty()) {
    for (auto at = message.find(password_); at != std::string::npos; at = message.find(password_, at + 3)) {
      message.replace(at, password_.size(), "***");
    }
  }
  return message;
}

}  // namespace tipbench::history
