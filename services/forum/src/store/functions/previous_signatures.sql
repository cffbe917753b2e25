-- cast_vote and cast_votes with the signatures of the release before typed outbox rows
-- (docs/design/services.md#sql-functions-in-files, docs/design/events.md#outbox): while a rolling update runs, forum replicas of that release still call
-- them with payloads their code encoded. Each is now a thin adapter to the current function: it
-- builds the typed event from the arguments (the ids, the vote, `p_now` as occurredAt — the
-- instant that release encoded — and the event type from the headers it sent) and ignores the
-- encoded bytes, so no payload is encoded in SQL any more. Drop both in the release after
-- (migration), once no replica of that release runs.
CREATE OR REPLACE FUNCTION cast_vote(
  p_post_id text, p_voter_id text, p_vote smallint, p_now timestamptz,
  p_agenda_min_score integer, p_agenda_size integer,
  p_vote_event_id text, p_vote_payload bytea, p_vote_headers jsonb,
  p_agenda_event_id text, p_agenda_payload bytea, p_agenda_headers jsonb,
  p_source text DEFAULT NULL,
  OUT post_found boolean, OUT changed boolean, OUT previous_vote smallint,
  OUT tally_for integer, OUT tally_against integer, OUT moved_to_agenda boolean)
  LANGUAGE plpgsql AS $$
DECLARE
  at text := to_char(p_now AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"');
  guard jsonb := '{"aps-typed-row": "typed\nrow"}';
BEGIN
  SELECT * INTO post_found, changed, previous_vote, tally_for, tally_against, moved_to_agenda
    FROM cast_vote(p_post_id, p_voter_id, p_vote, p_now, p_agenda_min_score, p_agenda_size, p_source,
      jsonb_build_object('type', p_vote_headers ->> 'aps-event-type', 'headers', p_vote_headers || guard,
        'fields', jsonb_build_object('eventId', p_vote_event_id, 'occurredAt', at, 'postId', p_post_id,
                                     'voterId', p_voter_id, 'vote', p_vote)),
      jsonb_build_object('type', p_agenda_headers ->> 'aps-event-type', 'headers', p_agenda_headers || guard,
        'fields', jsonb_build_object('eventId', p_agenda_event_id, 'occurredAt', at, 'postId', p_post_id)));
END $$;

CREATE OR REPLACE FUNCTION cast_votes(
  p_post_ids text[], p_voter_ids text[], p_votes smallint[], p_nows timestamptz[],
  p_agenda_min_score integer, p_agenda_size integer,
  p_vote_event_ids text[], p_vote_payloads bytea[], p_vote_headers jsonb[],
  p_agenda_event_ids text[], p_agenda_payloads bytea[], p_agenda_headers jsonb[],
  p_sources text[] DEFAULT NULL)
  RETURNS TABLE (idx integer, post_found boolean, changed boolean, tally_for integer, tally_against integer)
  LANGUAGE plpgsql AS $$
BEGIN
  -- The current cast_votes (which checks the lengths) with each element's events built as the
  -- adapter above builds them.
  RETURN QUERY SELECT * FROM cast_votes(p_post_ids, p_voter_ids, p_votes, p_nows, p_agenda_min_score, p_agenda_size, p_sources,
    ARRAY(SELECT jsonb_build_object('type', p_vote_headers[i] ->> 'aps-event-type',
                   'headers', p_vote_headers[i] || '{"aps-typed-row": "typed\nrow"}'::jsonb,
                   'fields', jsonb_build_object('eventId', p_vote_event_ids[i],
                     'occurredAt', to_char(p_nows[i] AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                     'postId', p_post_ids[i], 'voterId', p_voter_ids[i], 'vote', p_votes[i]))
            FROM generate_subscripts(p_post_ids, 1) AS g(i) ORDER BY i),
    ARRAY(SELECT jsonb_build_object('type', p_agenda_headers[i] ->> 'aps-event-type',
                   'headers', p_agenda_headers[i] || '{"aps-typed-row": "typed\nrow"}'::jsonb,
                   'fields', jsonb_build_object('eventId', p_agenda_event_ids[i],
                     'occurredAt', to_char(p_nows[i] AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                     'postId', p_post_ids[i]))
            FROM generate_subscripts(p_post_ids, 1) AS g(i) ORDER BY i));
END $$;

-- The protobuf encoders of that release's cast_vote (migration 1731000000002), unused now.
DROP FUNCTION IF EXISTS pb_string_field(integer, text);
DROP FUNCTION IF EXISTS pb_int32_field(integer, integer);
DROP FUNCTION IF EXISTS pb_varint(bigint);
