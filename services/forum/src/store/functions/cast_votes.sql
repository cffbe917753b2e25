-- Group commit of votes (docs/design/votes-and-heat.md#group-commits-in-the-forum): the votes that arrived while the previous batch was being
-- written are written together, in ONE statement and so ONE transaction, one round trip and one
-- WAL flush for all of them. Applied at every start (docs/design/services.md#sql-functions-in-files): this file is the live definition.
--
-- Element i of every array is one vote, exactly the arguments of `cast_vote` (cast_vote.sql, whose
-- header is the specification of each vote); a NULL p_sources or element = the voter's own source.
-- The batch first locks all its posts in id order (the global lock order), then applies the votes
-- in the order (post_id, voter_id, i), so two votes of one identity on one post keep their arrival
-- order. Returns one row per element: its index `idx` (1-based) and the outcome of its vote. An
-- error in any vote aborts the whole batch (nothing is written); the caller then retries the votes
-- one by one, so a failing vote never takes the others with it.
CREATE OR REPLACE FUNCTION cast_votes(
  p_post_ids text[], p_voter_ids text[], p_votes smallint[], p_nows timestamptz[],
  p_agenda_min_score integer, p_agenda_size integer, p_sources text[],
  p_vote_events jsonb[], p_agenda_events jsonb[])
  RETURNS TABLE (idx integer, post_found boolean, changed boolean, tally_for integer, tally_against integer)
  LANGUAGE plpgsql AS $$
DECLARE
  i integer;
  r record;
BEGIN
  IF cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_voter_ids)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_votes)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_nows)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_vote_events)
     OR cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_agenda_events)
     OR (p_sources IS NOT NULL AND cardinality(p_post_ids) IS DISTINCT FROM cardinality(p_sources)) THEN
    RAISE EXCEPTION 'cast_votes: the argument arrays differ in length' USING ERRCODE = 'invalid_parameter_value';
  END IF;
  PERFORM 1 FROM (SELECT q.id FROM posts q WHERE q.id = ANY(p_post_ids) ORDER BY q.id FOR NO KEY UPDATE) l;
  FOR i IN
    SELECT u.o::integer FROM unnest(p_post_ids, p_voter_ids) WITH ORDINALITY AS u(post_id, voter_id, o)
     ORDER BY u.post_id, u.voter_id, u.o
  LOOP
    SELECT * INTO r FROM cast_vote(p_post_ids[i], p_voter_ids[i], p_votes[i], p_nows[i],
                                   p_agenda_min_score, p_agenda_size, p_sources[i],
                                   p_vote_events[i], p_agenda_events[i]);
    idx := i;
    post_found := r.post_found;
    changed := r.changed;
    tally_for := r.tally_for;
    tally_against := r.tally_against;
    RETURN NEXT;
  END LOOP;
END $$;
