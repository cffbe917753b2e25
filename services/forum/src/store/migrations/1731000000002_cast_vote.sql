-- Up Migration
-- A vote is ONE statement, `SELECT * FROM cast_vote(…)`, run as its own transaction: one round
-- trip instead of nine (docs/adr/0090-vote-as-one-statement.md). It keeps every rule of the
-- former multi-statement transaction: one vote per identity, changeable; the same vote again
-- changes nothing and emits nothing; exact tallies under concurrency; the append-only history
-- (docs/adr/0015); the heat rule (docs/adr/0014); the events in the outbox of the same
-- transaction (docs/architecture.md §6).

-- Protocol Buffers wire format, for the parts of an event payload only known inside the
-- transaction (https://protobuf.dev/programming-guides/encoding/). The caller encodes the fields
-- it knows; the fields appended here follow them, in field-number order, and are left out when
-- they hold the proto3 default (0, ""), so the bytes equal what the generated encoder writes.

-- Base-128 varint of the 64-bit two's complement of `v` (a negative int32 takes 10 bytes).
CREATE FUNCTION pb_varint(v bigint) RETURNS bytea
  LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
  buf bytea := '\x'::bytea;
  b integer;
BEGIN
  LOOP
    b := (v & 127)::integer;
    -- logical shift right by 7: drop the 7 bits an arithmetic shift copies from the sign
    v := (v >> 7) & 144115188075855871; -- 2^57 − 1
    IF v = 0 THEN
      RETURN buf || set_byte('\x00'::bytea, 0, b);
    END IF;
    buf := buf || set_byte('\x00'::bytea, 0, b | 128);
  END LOOP;
END $$;

-- Field `field` of type int32 (wire type 0); empty for 0.
CREATE FUNCTION pb_int32_field(field integer, v integer) RETURNS bytea
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE WHEN v = 0 THEN '\x'::bytea ELSE pb_varint(field::bigint << 3) || pb_varint(v) END;

-- Field `field` of type string (wire type 2, UTF-8); empty for ''.
CREATE FUNCTION pb_string_field(field integer, v text) RETURNS bytea
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  RETURN CASE WHEN v = '' THEN '\x'::bytea
              ELSE pb_varint((field::bigint << 3) | 2) || pb_varint(octet_length(convert_to(v, 'UTF8'))) || convert_to(v, 'UTF8') END;

-- Records `p_vote` (1 | −1) of `p_voter_id` on `p_post_id` at `p_now`.
--  * post_found = false: no such post, nothing written.
--  * changed = false: the identity's current vote already is p_vote (nothing written, no event);
--    tally_* are the post's current tallies.
--  * changed = true: the votes row is inserted or flipped, a vote_events row appended, the
--    tallies and heat updated by the transition previous_vote → p_vote, the heat rule applied,
--    and `forum.vote_cast` (and, when the rule fires, `forum.post_on_agenda` before it) written
--    to the outbox.
-- Concurrency (READ COMMITTED): the transition is decided under the lock of the identity's votes
-- row (UPDATE … WHERE vote <> p_vote, or INSERT … ON CONFLICT DO NOTHING, re-read on a race), and
-- the tallies move by increments under the post row's lock, so they always equal a count of the
-- votes table. Locks are taken in one order, votes row then post row, so votes never deadlock.
-- The outbox rows are inserted while the post row is locked: events of one post get increasing
-- seq in commit order.
-- Payloads: p_vote_payload is forum.VoteCast with fields 1–5 (event_id … vote), completed here
-- with previous_vote (6), votes_for (7), votes_against (8); p_agenda_payload is
-- forum.PostOnAgenda with fields 1–3, completed with author_id (4).
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

-- Down Migration
DROP FUNCTION cast_vote(text, text, smallint, timestamptz, integer, integer, text, bytea, jsonb, text, bytea, jsonb);
DROP FUNCTION pb_string_field(integer, text);
DROP FUNCTION pb_int32_field(integer, integer);
DROP FUNCTION pb_varint(bigint);
