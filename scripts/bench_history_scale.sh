#!/usr/bin/env bash
# The history store's scale benchmark (docs/history.md, "Scale"): ingest 1,000 runs, then detect
# over 10,000 series x 500 runs, on a SQLite file and on a throw-away PostgreSQL 15 server
# (loopback, a temporary data directory, stopped at the end). Prints tipbench_history_scale's lines.
# Usage: scripts/bench_history_scale.sh [BUILD_DIR] [all|detect]   (needs postgresql-15: bootstrap.sh --test)
#   detect: only the 10,000-series detect (its ingest included), each store. Detect runs 3 times,
#   each on a store opened afresh (median and range); the peak RSS of each process is printed.
set -euo pipefail
build=${1:-build}
only=${2:-all}
[[ $only == all || $only == detect ]] || { echo "error: the second argument is all or detect, not '$only'" >&2; exit 2; }
bin=$build/apps/tipbench_history_scale
pgbin=/usr/lib/postgresql/15/bin
[[ -x $bin ]] || { echo "error: $bin missing (cmake --build $build --target tipbench_history_scale)" >&2; exit 2; }
[[ -x $pgbin/initdb ]] || { echo "error: PostgreSQL 15 missing (scripts/bootstrap.sh --test)" >&2; exit 2; }
shm=/dev/shm; (($(df --output=avail -k "$shm" 2>/dev/null | tail -1) > 4000000)) || shm=${TMPDIR:-/tmp}
tmp=$(mktemp -d "$shm/tipbench-scale.XXXXXX")
as_pg() { if ((EUID == 0)); then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  [[ -f $tmp/pg/postmaster.pid ]] && as_pg "$pgbin/pg_ctl" -D "$tmp/pg" -m fast stop >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
((EUID == 0)) && chown postgres "$tmp"
as_pg "$pgbin/initdb" -D "$tmp/pg" -U tipbench --auth=trust >/dev/null
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
as_pg "$pgbin/pg_ctl" -D "$tmp/pg" -l "$tmp/pg.log" -o "-c listen_addresses=127.0.0.1 -p $port -k $tmp/pg" -w start >/dev/null
for db in ingest detect; do "$pgbin/createdb" -h 127.0.0.1 -p "$port" -U tipbench "$db"; done
pg=postgresql://tipbench@127.0.0.1:$port
nproc_line="$(nproc) CPUs, $(uname -m), $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo "# tipbench_history_scale, $nproc_line"
if [[ $only == all ]]; then
  for store in "$tmp/ingest.db" "$pg/ingest"; do "$bin" --store "$store" --runs 1000 --cases 100 --blocks 6; done
fi
for store in "$tmp/detect.db" "$pg/detect"; do
  /usr/bin/time -f "  peak RSS %M KiB" "$bin" --store "$store" --runs 500 --cases 2500 --blocks 1 --repeats 3
done
