-- Up Migration
-- A vote is ONE statement, `SELECT * FROM cast_vote(…)` (docs/adr/0090). This migration created the
-- first cast_vote and the protobuf helpers it encoded its events with. Since docs/adr/0180 a SQL
-- function lives once, in store/functions/*.sql, applied at every start after the migrations
-- (cast_vote.sql is the live definition and its specification), and since docs/adr/0181 no payload
-- is encoded in SQL: so nothing is created here any more (the former text is in git history).
SELECT 1;

-- Down Migration
SELECT 1;
