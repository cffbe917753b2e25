-- Up Migration
-- Ballot positions (docs/reference/council.md "Positions"): approve and reject decide, abstain
-- counts toward the quorum only, recuse leaves the electorate; the author of a proposal, when
-- seated, is recused from its case. Cases opened before keep their ballots as cast (approve or
-- reject) and count 0 abstentions and 0 recusals.
ALTER TABLE ballots DROP CONSTRAINT IF EXISTS ballots_vote_check;
ALTER TABLE ballots ADD CONSTRAINT ballots_vote_check CHECK (vote IN ('approve', 'reject', 'abstain', 'recuse'));
ALTER TABLE cases ADD COLUMN abstentions integer NOT NULL DEFAULT 0;
ALTER TABLE cases ADD COLUMN recusals integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE cases DROP COLUMN recusals;
ALTER TABLE cases DROP COLUMN abstentions;
DELETE FROM ballots WHERE vote IN ('abstain', 'recuse');
ALTER TABLE ballots DROP CONSTRAINT ballots_vote_check;
ALTER TABLE ballots ADD CONSTRAINT ballots_vote_check CHECK (vote IN ('approve', 'reject'));
