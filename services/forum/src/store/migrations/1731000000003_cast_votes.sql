-- Up Migration
-- Group commit of votes (docs/adr/0097-votes-in-group-commits.md): the votes that arrived while
-- the previous batch was being written are written together, in ONE statement and so ONE
-- transaction, one round trip and one WAL flush for all of them.
--
-- Element i of every array is one vote, exactly the arguments of `cast_vote` (migration
-- 1731000000002, whose header comment is the specification of each vote: rules, tallies, heat
-- rule, outbox rows). The batch first locks all its posts in id order, then applies the votes in
-- the order (post_id, voter_id, i), so two votes of one identity on one post keep their arrival
-- order. Returns one row per element: its index `idx` (1-based) and the outcome of its vote.
-- An error in any vote aborts the whole batch (nothing is written); the caller then retries the
-- votes one by one, so a failing vote never takes the others with it.

-- cast_vote again, with one change of lock order (docs/adr/0097): the post row is locked first
-- (FOR NO KEY UPDATE), then the identity's votes row. A batch locks all its posts first, in id
-- order, so every vote transaction takes its locks in one global order — post rows in id order,
-- each followed by that post's votes rows — and no two of them can deadlock, whatever mix of
-- batches and single votes several forum replicas run. Everything else is the specification in
-- migration 1731000000002.
CREATE OR REPLACE FUNCTION cast_vote(
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

-- Down Migration
DROP FUNCTION cast_votes(text[], text[], smallint[], timestamptz[], integer, integer, text[], bytea[], jsonb[], text[], bytea[], jsonb[]);
-- cast_vote as migration 1731000000002 defined it
CREATE OR REPLACE FUNCTION cast_vote(
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
      IF NOT EXISTS (SELECT 1 FROM posts q WHERE q.id = p_post_id) THEN
        post_found := false;
        RETURN;
      END IF;
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

