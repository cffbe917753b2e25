-- Up Migration
-- The per-minute request counters are written on nearly every request and worth nothing after a
-- crash: unlogged, they write no WAL and their commits wait for no flush. A PostgreSQL crash or a
-- failover empties the table, and every partition starts a fresh window — the same lapse as the
-- counter store being down (docs/design/identity-and-abuse.md#counting-across-replicas).
ALTER TABLE rate_limits SET UNLOGGED;

-- Down Migration
ALTER TABLE rate_limits SET LOGGED;
