-- A vote is ONE statement, `SELECT * FROM cast_vote(…)`, run as its own transaction: one round trip
-- (docs/design/votes-and-heat.md#the-vote-statement). Applied at every start (docs/design/services.md#sql-functions-in-files): this file is the live definition.
--
-- Records `p_vote` (1 | −1) of `p_voter_id` on `p_post_id` at `p_now`, cast from `p_source` (the
-- client's source, docs/design/identity-and-abuse.md#client-source-and-abuse-source; NULL or '' = the voter's own, `agent:<id>`).
--  * post_found = false: no such post, nothing written.
--  * changed = false: the identity's current vote already is p_vote (nothing written, no event);
--    tally_* are the post's current tallies.
--  * changed = true: the votes row is inserted or flipped (with the source of this change), a
--    vote_events row appended (docs/design/council.md#sagacity-awards), the tallies, vote_sources / sources_for and heat
--    updated by the transition previous_vote → p_vote, the heat rule applied, and the events
--    written to the outbox: `p_vote_event` and, when the rule fires, `p_agenda_event` before it.
-- The rule (docs/design/votes-and-heat.md; its TypeScript home is src/heat.ts): the agenda score is
-- a = sources_for − votes_against (a +1 counts once per source per post); heat = heat(a,
-- created_at); an open proposal with a ≥ p_agenda_min_score among the top p_agenda_size open
-- proposals by heat moves to the agenda (at most p_agenda_size entries of posts_open_hot are read,
-- plus the hidden ones among them). A hidden proposal neither moves nor holds a place in the rank
-- (docs/design/votes-and-heat.md#the-agenda-rule).
-- The for/against tallies shown and sent count every identity's vote.
-- Events (docs/design/events.md#outbox): each argument is `{"type", "fields", "headers"}` (platform's
-- `typedOutboxEvent`): the catalogue type, the fields known before the call and the outbox
-- headers. The row gets typed fields, completed here with what is learnt under the locks
-- (forum.VoteCast: previousVote, votesFor, votesAgainst, postAuthorId; forum.PostOnAgenda: authorId); the outbox
-- relay encodes them with the catalogue's generated code. Nothing here encodes a payload.
-- Concurrency (READ COMMITTED): locks in one order for every vote transaction, single or batch
-- (docs/design/votes-and-heat.md#group-commits-in-the-forum): the post row first (FOR NO KEY UPDATE, which does not block the foreign-key
-- checks of comments and votes being inserted), then the identity's votes row; the transition is
-- decided under the votes row's lock (UPDATE … WHERE vote <> p_vote, or INSERT … ON CONFLICT DO
-- NOTHING, re-read on a race), and every counter moves by increments under the post row's lock,
-- so tallies always equal a count of the votes table. The outbox rows are inserted while the post
-- row is locked: events of one post get increasing seq in commit order.
CREATE OR REPLACE FUNCTION cast_vote(
  p_post_id text, p_voter_id text, p_vote smallint, p_now timestamptz,
  p_agenda_min_score integer, p_agenda_size integer, p_source text,
  p_vote_event jsonb, p_agenda_event jsonb,
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
      -- A flip, recorded with the source it comes from. The row lock re-checks the condition on
      -- the latest version: if a concurrent request of the same identity set it to p_vote
      -- meanwhile, nothing is updated and the next attempt sees the same vote.
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

  -- One +1 per source (docs/design/votes-and-heat.md#agenda-score-per-source): the +1 withdrawn leaves its source, the +1 cast joins its.
  -- A +1 from 'uncounted:…' (a voter younger than MIN_AGENT_AGE_MS, docs/design/identity-and-abuse.md#new-agents) joins
  -- no source and so counts toward no agenda score; its withdrawal leaves none.
  IF prev = 1 AND prev_source NOT LIKE 'uncounted:%' THEN
    DELETE FROM vote_sources s WHERE s.post_id = p_post_id AND s.source = prev_source AND s.plus = 1;
    IF FOUND THEN
      sources_delta := -1;
    ELSE
      UPDATE vote_sources s SET plus = s.plus - 1 WHERE s.post_id = p_post_id AND s.source = prev_source;
    END IF;
  END IF;
  IF p_vote = 1 AND src NOT LIKE 'uncounted:%' THEN
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
  RETURNING q.votes_for, q.votes_against, q.sources_for, q.heat, q.status, q.is_arch_design, q.author_id, q.hidden_at INTO p;

  IF p.is_arch_design AND p.status = 'open' AND p.hidden_at IS NULL AND p.sources_for - p.votes_against >= p_agenda_min_score THEN
    SELECT count(*) INTO ahead FROM (
      SELECT 1 FROM posts q
       WHERE q.is_arch_design AND q.status = 'open' AND q.hidden_at IS NULL AND (q.heat, q.id) > (p.heat, p_post_id)
       ORDER BY q.heat DESC, q.id DESC LIMIT p_agenda_size
    ) t;
    IF ahead < p_agenda_size THEN
      UPDATE posts q SET status = 'agenda' WHERE q.id = p_post_id;
      INSERT INTO outbox (event_id, subject, fields, headers)
      VALUES (p_agenda_event #>> '{fields,eventId}', p_agenda_event ->> 'type',
              (p_agenda_event -> 'fields') || jsonb_build_object('authorId', p.author_id),
              p_agenda_event -> 'headers');
      moved_to_agenda := true;
    END IF;
  END IF;

  INSERT INTO outbox (event_id, subject, fields, headers)
  VALUES (p_vote_event #>> '{fields,eventId}', p_vote_event ->> 'type',
          (p_vote_event -> 'fields') || jsonb_build_object('previousVote', prev, 'votesFor', p.votes_for, 'votesAgainst', p.votes_against,
                                                      'postAuthorId', COALESCE(p.author_id, '')),
          p_vote_event -> 'headers');
  changed := true;
  previous_vote := prev;
  tally_for := p.votes_for;
  tally_against := p.votes_against;
END $$;
