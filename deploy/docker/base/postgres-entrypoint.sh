#!/bin/sh
# Initialises $PGDATA on first start (password auth over TCP), then runs postgres in the foreground
# (deploy/docker/base/postgres.Dockerfile).
set -eu
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
  pwfile=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
  "$bin/initdb" -D "$PGDATA" -U postgres --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8 >/dev/null
  rm -f "$pwfile"
  echo "host all all 0.0.0.0/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  echo "host all all ::/0 scram-sha-256" >> "$PGDATA/pg_hba.conf"
  "$bin/pg_ctl" -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
  "$bin/psql" -v ON_ERROR_STOP=1 -U postgres -d postgres -c "CREATE DATABASE \"${POSTGRES_DB:-aps}\"" >/dev/null
  "$bin/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null
fi
exec "$bin/postgres" -D "$PGDATA" -c listen_addresses='*' -c max_connections="${POSTGRES_MAX_CONNECTIONS:-200}" "$@"
