#!/bin/sh
# The rehearsal's adapter for the chart's PostgreSQL pod (written for the official `postgres`
# image) on aps-base/postgres (Debian's `postgresql` package): the official image's entrypoint
# contract, the part the chart relies on —
#   - first start of an empty $PGDATA: initdb with $POSTGRES_USER as the superuser and
#     $POSTGRES_PASSWORD (scram-sha-256 over TCP), the database $POSTGRES_DB, then every
#     /docker-entrypoint-initdb.d/*.sh (run when executable, else sourced) and *.sql, against a
#     server listening on its Unix socket only;
#   - then `postgres` in the foreground with the pod's args (`-c max_connections=…`).
# Mounted read-only into the container and used as its entrypoint by test/deploy/rehearsal/images.ts.
set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
: "${PGDATA:?PGDATA is required}"
: "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
POSTGRES_USER=${POSTGRES_USER:-postgres}
POSTGRES_DB=${POSTGRES_DB:-$POSTGRES_USER}
export POSTGRES_USER POSTGRES_DB
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  mkdir -p "$PGDATA"
  chmod 700 "$PGDATA"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  "$bin/initdb" -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses='' -c unix_socket_directories=/var/run/postgresql" -w start >/dev/null
  if [ "$POSTGRES_DB" != postgres ]; then
    "$bin/psql" -v ON_ERROR_STOP=1 -h /var/run/postgresql -U "$POSTGRES_USER" -d postgres -c "CREATE DATABASE \"$POSTGRES_DB\"" >/dev/null
  fi
  export PGHOST=/var/run/postgresql
  for f in /docker-entrypoint-initdb.d/*; do
    [ -e "$f" ] || continue
    case "$f" in
      *.sh) if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
      *.sql) "$bin/psql" -v ON_ERROR_STOP=1 -U "$POSTGRES_USER" -d "$POSTGRES_DB" -f "$f" ;;
      *) echo "postgres-entrypoint: ignoring $f" ;;
    esac
  done
  unset PGHOST
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
  echo "postgres-entrypoint: initialised $PGDATA"
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c unix_socket_directories=/var/run/postgresql "$@"
