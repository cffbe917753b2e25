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

-- cast_vote and cast_votes take the source of each vote (the new last input argument, default
-- NULL = the voter's own source, so a caller of the former signature keeps working). Everything
-- else is the specification in migrations 1731000000002 and 1731000000003 (one vote per identity,
-- changeable; exact tallies; history; outbox rows; lock order post row, then votes row), with two
-- changes (docs/adr/0154):
--  * the votes row stores the source of its latest change, and vote_sources / posts.sources_for
--    follow the transition: a +1 withdrawn (flip to −1) leaves the source it was cast from, a +1
--    cast joins the source it is cast from;
--  * the heat rule reads the agenda score a = sources_for − votes_against (not votes_for −
--    votes_against): an open proposal with a ≥ AGENDA_MIN_SCORE among the top AGENDA_SIZE open
--    proposals by heat moves to the agenda, and heat is heat(a, created_at), so a crowd of one
--    source can neither reach the threshold nor fill the top AGENDA_SIZE ranks. The for/against
--    tallies shown and sent in forum.vote_cast still count every identity's vote.
DROP FUNCTION cast_votes(text[], text[], smallint[], timestamptz[], integer, integer, text[], bytea[], jsonb[], text[], bytea[], jsonb[]);
DROP FUNCTION cast_vote(text, text, smallint, timestamptz, integer, integer, text, bytea, jsonb, text, bytea, jsonb);

CREATE FUNCTION cast_vote(
  p_post_id text, p_voter_id text, p_vote smallint, p_now timestamptz,
  p_agenda_min_score integer, p_agenda_size integer,
  p_vote_event_id text, p_vote_payload bytea, p_vote_headers jsonb,
  p_agenda_event_id text, p_agenda_payload bytea, p_agenda_headers jsonb,
  p_source text DEFAULT NULL,
  OUT post_found boolean, OUT changed boolean, OUT previous_vote smallint,
  OUT tally_for integer, OUT tally_against integer, OUT moved_to_agenda boolean)
  LANGUAGE plpgsql AS $$
DECLARE
  prev smallint;
  prev_source text;
  src text := coalesce(nullif(p_source, ''), 'agent:' || p_voter_id);
  sources_delta integer := 0;
  n integer;
  p record;
  ahead integer;
  attempt integer := 0;
BEGIN
  IF p_vote NOT IN (1, -1) THEN
    RAISE EXCEPTION 'vote must be 1 or -1, got %', p_vote USING ERRCODE = 'check_violation';
  END IF;
  post_found := true;
  changed := false;
  moved_to_agenda := false;
  -- The fast path: the same vote again reads, locks nothing and writes nothing.
  SELECT v.vote INTO prev FROM votes v WHERE v.post_id = p_post_id AND v.agent_id = p_voter_id;
  IF prev = p_vote THEN
    SELECT q.votes_for, q.votes_against INTO tally_for, tally_against FROM posts q WHERE q.id = p_post_id;
    previous_vote := prev;
    RETURN;
  END IF;
  -- Locks in one order for every vote transaction, single or batch: the post row first, then
  -- the identity's votes row (docs/adr/0097). Every change of the post's votes and vote_sources
  -- rows happens under this lock, so the per-source counters move exactly.
  PERFORM 1 FROM posts q WHERE q.id = p_post_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    post_found := false;
    RETURN;
  END IF;
  LOOP
    attempt := attempt + 1;
    IF attempt > 5 THEN
      RAISE EXCEPTION 'cast_vote: no stable outcome after % attempts', attempt - 1 USING ERRCODE = 'serialization_failure';
    END IF;
    SELECT v.vote, coalesce(v.source, 'agent:' || v.agent_id) INTO prev, prev_source
      FROM votes v WHERE v.post_id = p_post_id AND v.agent_id = p_voter_id;
    IF prev = p_vote THEN
      -- The same vote again: nothing changes, no event (idempotent).
      SELECT q.votes_for, q.votes_against INTO tally_for, tally_against FROM posts q WHERE q.id = p_post_id;
      previous_vote := prev;
      RETURN;
    ELSIF prev IS NOT NULL THEN
      -- A flip, recorded with the source it comes from.
      UPDATE votes v SET vote = p_vote, cast_at = p_now, source = src
       WHERE v.post_id = p_post_id AND v.agent_id = p_voter_id AND v.vote <> p_vote;
      IF FOUND THEN
        prev := -p_vote;
        EXIT;
      END IF;
    ELSE
      -- A first vote; a concurrent first vote of the same identity wins the insert, and the next
      -- attempt treats this one as a flip or a repeat of it.
      INSERT INTO votes (post_id, agent_id, vote, cast_at, source) VALUES (p_post_id, p_voter_id, p_vote, p_now, src)
      ON CONFLICT (post_id, agent_id) DO NOTHING;
      IF FOUND THEN
        prev := 0;
        EXIT;
      END IF;
    END IF;
  END LOOP;

  -- One +1 per source (docs/adr/0154): the +1 withdrawn leaves its source, the +1 cast joins its.
  IF prev = 1 THEN
    DELETE FROM vote_sources s WHERE s.post_id = p_post_id AND s.source = prev_source AND s.plus = 1;
    IF FOUND THEN
      sources_delta := -1;
    ELSE
      UPDATE vote_sources s SET plus = s.plus - 1 WHERE s.post_id = p_post_id AND s.source = prev_source;
    END IF;
  END IF;
  IF p_vote = 1 THEN
    INSERT INTO vote_sources AS s (post_id, source, plus) VALUES (p_post_id, src, 1)
    ON CONFLICT (post_id, source) DO UPDATE SET plus = s.plus + 1
    RETURNING s.plus INTO n;
    IF n = 1 THEN
      sources_delta := sources_delta + 1;
    END IF;
  END IF;

  INSERT INTO vote_events (post_id, agent_id, vote, cast_at) VALUES (p_post_id, p_voter_id, p_vote, p_now);
  UPDATE posts q
     SET votes_for = q.votes_for + (p_vote = 1)::integer - (prev = 1)::integer,
         votes_against = q.votes_against + (p_vote = -1)::integer - (prev = -1)::integer,
         sources_for = q.sources_for + sources_delta,
         heat = heat((q.sources_for + sources_delta) - (q.votes_against + (p_vote = -1)::integer - (prev = -1)::integer), q.created_at),
         updated_at = p_now
   WHERE q.id = p_post_id
  RETURNING q.votes_for, q.votes_against, q.sources_for, q.heat, q.status, q.is_arch_design, q.author_id INTO p;

  -- The heat rule (docs/adr/0014) on the agenda score (docs/adr/0154): an open proposal with
  -- sources_for − votes_against ≥ AGENDA_MIN_SCORE among the top AGENDA_SIZE open proposals by
  -- heat moves to the agenda; at most AGENDA_SIZE entries of the partial index posts_open_hot are read.
  IF p.is_arch_design AND p.status = 'open' AND p.sources_for - p.votes_against >= p_agenda_min_score THEN
    SELECT count(*) INTO ahead FROM (
      SELECT 1 FROM posts q
       WHERE q.is_arch_design AND q.status = 'open' AND (q.heat, q.id) > (p.heat, p_post_id)
       ORDER BY q.heat DESC, q.id DESC LIMIT p_agenda_size
    ) t;
    IF ahead < p_agenda_size THEN
      UPDATE posts q SET status = 'agenda' WHERE q.id = p_post_id;
      INSERT INTO outbox (event_id, subject, payload, headers)
      VALUES (p_agenda_event_id, 'forum.post_on_agenda', p_agenda_payload || pb_string_field(4, p.author_id), p_agenda_headers);
      moved_to_agenda := true;
    END IF;
  END IF;

  INSERT INTO outbox (event_id, subject, payload, headers)
  VALUES (p_vote_event_id, 'forum.vote_cast',
          p_vote_payload || pb_int32_field(6, prev) || pb_int32_field(7, p.votes_for) || pb_int32_field(8, p.votes_against),
          p_vote_headers);
  changed := true;
  previous_vote := prev;
  tally_for := p.votes_for;
  tally_against := p.votes_against;
END $$;

-- cast_votes as migration 1731000000003 defines it, with each vote's source (p_sources[i]; a
-- NULL array or element = the voter's own source).
CREATE FUNCTION cast_votes(
  p_post_ids text[], p_voter_ids text[], p_votes smallint[], p_nows timestamptz[],
  p_agenda_min_score integer, p_agenda_size integer,
  p_vote_event_ids text[], p_vote_payloads bytea[], p_vote_headers jsonb[],
  p_agenda_event_ids text[], p_agenda_payloads bytea[], p_agenda_headers jsonb[],
  p_sources text[] DEFAULT NULL)
  RETURNS TABLE (idx integer, post_found boolean, changed boolean, tally_for integer, tally_against integer)
  LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  r record;
BEGIN
  IF cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_voter_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_votes)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_nows)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_event_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_payloads)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_headers)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_event_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_payloads)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_headers)
     OR (p_sources IS NOT NULL AND cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_sources)) THEN
    RAISE EXCEPTION 'cast_votes: the argument arrays differ in length' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- Every post of the batch locked first, in id order (the global lock order, docs/adr/0097).
  PERFORM 1 FROM (SELECT q.id FROM posts q WHERE q.id = ANY(p_post_ids) ORDER BY q.id FOR NO KEY UPDATE) l;
  FOR i IN
    SELECT u.o::integer FROM unnest(p_post_ids, p_voter_ids) WITH ORDINALITY AS u(post_id, voter_id, o)
     ORDER BY u.post_id, u.voter_id, u.o
  LOOP
    SELECT * INTO r FROM cast_vote(p_post_ids[i], p_voter_ids[i], p_votes[i], p_nows[i],
                                   p_agenda_min_score, p_agenda_size,
                                   p_vote_event_ids[i], p_vote_payloads[i], p_vote_headers[i],
                                   p_agenda_event_ids[i], p_agenda_payloads[i], p_agenda_headers[i],
                                   p_sources[i]);
    idx := i;
    post_found := r.post_found;
    changed := r.changed;
    tally_for := r.tally_for;
    tally_against := r.tally_against;
    RETURN NEXT;
  END LOOP;
END $$;

-- Down Migration
DROP FUNCTION cast_votes(text[], text[], smallint[], timestamptz[], integer, integer, text[], bytea[], jsonb[], text[], bytea[], jsonb[], text[]);
DROP FUNCTION cast_vote(text, text, smallint, timestamptz, integer, integer, text, bytea, jsonb, text, bytea, jsonb, text);
-- cast_vote and cast_votes as migration 1731000000003 defined them
CREATE FUNCTION cast_vote(
  p_post_id text, p_voter_id text, p_vote smallint, p_now timestamptz,
  p_agenda_min_score integer, p_agenda_size integer,
  p_vote_event_id text, p_vote_payload bytea, p_vote_headers jsonb,
  p_agenda_event_id text, p_agenda_payload bytea, p_agenda_headers jsonb,
  OUT post_found boolean, OUT changed boolean, OUT previous_vote smallint,
  OUT tally_for integer, OUT tally_against integer, OUT moved_to_agenda boolean)
  LANGUAGE plpgsql AS $$
DECLARE
  prev smallint;
  p record;
  ahead integer;
  attempt integer := 0;
BEGIN
  IF p_vote NOT IN (1, -1) THEN
    RAISE EXCEPTION 'vote must be 1 or -1, got %', p_vote USING ERRCODE = 'check_violation';
  END IF;
  post_found := true;
  changed := false;
  moved_to_agenda := false;
  -- The fast path: the same vote again reads, locks nothing and writes nothing.
  SELECT v.vote INTO prev FROM votes v WHERE v.post_id = p_post_id AND v.agent_id = p_voter_id;
  IF prev = p_vote THEN
    SELECT q.votes_for, q.votes_against INTO tally_for, tally_against FROM posts q WHERE q.id = p_post_id;
    previous_vote := prev;
    RETURN;
  END IF;
  -- Locks in one order for every vote transaction, single or batch: the post row first, then
  -- the identity's votes row (docs/adr/0097). FOR NO KEY UPDATE does not block the foreign-key
  -- checks (KEY SHARE) of comments and votes being inserted meanwhile.
  PERFORM 1 FROM posts q WHERE q.id = p_post_id FOR NO KEY UPDATE;
  IF NOT FOUND THEN
    post_found := false;
    RETURN;
  END IF;
  LOOP
    attempt := attempt + 1;
    IF attempt > 5 THEN
      RAISE EXCEPTION 'cast_vote: no stable outcome after % attempts', attempt - 1 USING ERRCODE = 'serialization_failure';
    END IF;
    SELECT v.vote INTO prev FROM votes v WHERE v.post_id = p_post_id AND v.agent_id = p_voter_id;
    IF prev = p_vote THEN
      -- The same vote again: nothing changes, no event (idempotent).
      SELECT q.votes_for, q.votes_against INTO tally_for, tally_against FROM posts q WHERE q.id = p_post_id;
      previous_vote := prev;
      RETURN;
    ELSIF prev IS NOT NULL THEN
      -- A flip. The row lock re-checks the condition on the latest version: if a concurrent
      -- request of the same identity set it to p_vote meanwhile, nothing is updated and the
      -- next attempt sees the same vote.
      UPDATE votes v SET vote = p_vote, cast_at = p_now WHERE v.post_id = p_post_id AND v.agent_id = p_voter_id AND v.vote <> p_vote;
      IF FOUND THEN
        prev := -p_vote;
        EXIT;
      END IF;
    ELSE
      -- A first vote; a concurrent first vote of the same identity wins the insert, and the next
      -- attempt treats this one as a flip or a repeat of it.
      INSERT INTO votes (post_id, agent_id, vote, cast_at) VALUES (p_post_id, p_voter_id, p_vote, p_now) ON CONFLICT (post_id, agent_id) DO NOTHING;
      IF FOUND THEN
        prev := 0;
        EXIT;
      END IF;
    END IF;
  END LOOP;

  INSERT INTO vote_events (post_id, agent_id, vote, cast_at) VALUES (p_post_id, p_voter_id, p_vote, p_now);
  UPDATE posts q
     SET votes_for = q.votes_for + (p_vote = 1)::integer - (prev = 1)::integer,
         votes_against = q.votes_against + (p_vote = -1)::integer - (prev = -1)::integer,
         heat = heat((q.votes_for + (p_vote = 1)::integer - (prev = 1)::integer) - (q.votes_against + (p_vote = -1)::integer - (prev = -1)::integer), q.created_at),
         updated_at = p_now
   WHERE q.id = p_post_id
  RETURNING q.votes_for, q.votes_against, q.heat, q.status, q.is_arch_design, q.author_id INTO p;

  -- The heat rule (docs/adr/0014): an open proposal with s ≥ AGENDA_MIN_SCORE among the top
  -- AGENDA_SIZE open proposals by heat moves to the agenda; at most AGENDA_SIZE entries of the
  -- partial index posts_open_hot are read.
  IF p.is_arch_design AND p.status = 'open' AND p.votes_for - p.votes_against >= p_agenda_min_score THEN
    SELECT count(*) INTO ahead FROM (
      SELECT 1 FROM posts q
       WHERE q.is_arch_design AND q.status = 'open' AND (q.heat, q.id) > (p.heat, p_post_id)
       ORDER BY q.heat DESC, q.id DESC LIMIT p_agenda_size
    ) t;
    IF ahead < p_agenda_size THEN
      UPDATE posts q SET status = 'agenda' WHERE q.id = p_post_id;
      INSERT INTO outbox (event_id, subject, payload, headers)
      VALUES (p_agenda_event_id, 'forum.post_on_agenda', p_agenda_payload || pb_string_field(4, p.author_id), p_agenda_headers);
      moved_to_agenda := true;
    END IF;
  END IF;

  INSERT INTO outbox (event_id, subject, payload, headers)
  VALUES (p_vote_event_id, 'forum.vote_cast',
          p_vote_payload || pb_int32_field(6, prev) || pb_int32_field(7, p.votes_for) || pb_int32_field(8, p.votes_against),
          p_vote_headers);
  changed := true;
  previous_vote := prev;
  tally_for := p.votes_for;
  tally_against := p.votes_against;
END $$;

CREATE FUNCTION cast_votes(
  p_post_ids text[], p_voter_ids text[], p_votes smallint[], p_nows timestamptz[],
  p_agenda_min_score integer, p_agenda_size integer,
  p_vote_event_ids text[], p_vote_payloads bytea[], p_vote_headers jsonb[],
  p_agenda_event_ids text[], p_agenda_payloads bytea[], p_agenda_headers jsonb[])
  RETURNS TABLE (idx integer, post_found boolean, changed boolean, tally_for integer, tally_against integer)
  LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  r record;
BEGIN
  IF cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_voter_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_votes)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_nows)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_event_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_payloads)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_headers)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_event_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_payloads)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_headers) THEN
    RAISE EXCEPTION 'cast_votes: the argument arrays differ in length' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  -- Every post of the batch locked first, in id order (the global lock order, above).
  PERFORM 1 FROM (SELECT q.id FROM posts q WHERE q.id = ANY(p_post_ids) ORDER BY q.id FOR NO KEY UPDATE) l;
  FOR i IN
    SELECT u.o::integer FROM unnest(p_post_ids, p_voter_ids) WITH ORDINALITY AS u(post_id, voter_id, o)
     ORDER BY u.post_id, u.voter_id, u.o
  LOOP
    SELECT * INTO r FROM cast_vote(p_post_ids[i], p_voter_ids[i], p_votes[i], p_nows[i],
                                   p_agenda_min_score, p_agenda_size,
                                   p_vote_event_ids[i], p_vote_payloads[i], p_vote_headers[i],
                                   p_agenda_event_ids[i], p_agenda_payloads[i], p_agenda_headers[i]);
    idx := i;
    post_found := r.post_found;
    changed := r.changed;
    tally_for := r.tally_for;
    tally_against := r.tally_against;
    RETURN NEXT;
  END LOOP;
END $$;

UPDATE posts SET heat = heat(votes_for - votes_against, created_at) WHERE sources_for <> votes_for;
ALTER TABLE posts DROP COLUMN sources_for;
DROP TABLE vote_sources;
ALTER TABLE flags DROP COLUMN source;
ALTER TABLE votes DROP COLUMN source;
