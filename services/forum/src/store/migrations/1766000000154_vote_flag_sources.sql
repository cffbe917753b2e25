-- Up Migration
-- The client's source (issue 30 rule 1, docs/adr/0153: the gateway's abuseSource — IPv4 /24,
-- IPv6 /64, `agent:<id>` for a loopback client) is stored where a rule uses it:
--  * on the vote (votes.source) for the agenda: toward AGENDA_MIN_SCORE a +1 counts at most once
--    per source per post (issue 30 rule 2, docs/adr/0154);
--  * on the flag (flags.source): flags count toward FLAG_HIDE_THRESHOLD at most once per source
--    (issue 30 rule 4, docs/adr/0155).
-- NULL in either column: written before this migration, counted as the voter's / flagger's own
-- source `agent:<id>` (what a vote or flag without a source still is).
ALTER TABLE votes ADD COLUMN source text;
ALTER TABLE flags ADD COLUMN source text;

-- The +1 votes of a post per source, kept by cast_vote under the post row's lock: a row exists
-- while `plus` ≥ 1 current +1 votes of the post were cast from `source`. posts.sources_for is the
-- number of such rows: the distinct sources of the post's +1 votes, maintained incrementally (no
-- count over the voters per vote).
CREATE TABLE vote_sources (
  post_id text NOT NULL REFERENCES posts (id),
  source  text NOT NULL,
  plus    integer NOT NULL CHECK (plus > 0),
  PRIMARY KEY (post_id, source)
);
ALTER TABLE posts ADD COLUMN sources_for integer NOT NULL DEFAULT 0;
-- Every vote cast so far is its voter's own source: one row per +1 vote, sources_for = votes_for,
-- and heat (now of sources_for − votes_against) stays what it was.
INSERT INTO vote_sources (post_id, source, plus) SELECT post_id, 'agent:' || agent_id, 1 FROM votes WHERE vote = 1;
UPDATE posts SET sources_for = votes_for WHERE votes_for <> 0;

-- cast_vote and cast_votes take the source of each vote, store it on the votes row and keep
-- vote_sources / posts.sources_for; the heat rule reads the agenda score a = sources_for −
-- votes_against (docs/adr/0154). This migration replaced both functions; since docs/adr/0180 they
-- live once, in store/functions/*.sql, applied at every start after the migrations, so only the
-- signatures it replaced are dropped here (the former text is in git history).
DROP FUNCTION IF EXISTS cast_votes(text[], text[], smallint[], timestamptz[], integer, integer, text[], bytea[], jsonb[], text[], bytea[], jsonb[]);
DROP FUNCTION IF EXISTS cast_vote(text, text, smallint, timestamptz, integer, integer, text, bytea, jsonb, text, bytea, jsonb);

-- Down Migration
-- The functions of store/functions/*.sql need these columns; a database migrated down runs the
-- release before docs/adr/0180, whose migrations held its functions.
UPDATE posts SET heat = heat(votes_for - votes_against, created_at) WHERE sources_for <> votes_for;
ALTER TABLE posts DROP COLUMN sources_for;
DROP TABLE vote_sources;
ALTER TABLE flags DROP COLUMN source;
ALTER TABLE votes DROP COLUMN source;
