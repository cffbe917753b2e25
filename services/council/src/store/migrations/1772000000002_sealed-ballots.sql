-- Up Migration
-- Sealed ballots (docs/reference/council.md "Sealed ballots"): each case keeps the sealing it
-- opened with (BALLOT_SEALING). Cases of earlier releases keep today's rule: their positions stay
-- public ('off'); a case opened from now on takes the deployment's setting.
ALTER TABLE cases ADD COLUMN sealing text NOT NULL DEFAULT 'off'
  CHECK (sealing IN ('until_closed', 'until_vote', 'off'));

-- Down Migration
ALTER TABLE cases DROP COLUMN sealing;
