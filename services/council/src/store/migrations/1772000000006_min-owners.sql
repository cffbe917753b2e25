-- Up Migration
-- Operator-diverse adoption (docs/design/council.md#operator-diverse-adoption): each ballot keeps
-- its caster's verified owner domain as it stood at ballot time ('' when not verified), each case
-- the k of COUNCIL_MIN_OWNERS it opened with and the distinct owners of its approve ballots.
-- Ballots and cases of earlier releases keep today's rule: no owner, k = 0 (off).
ALTER TABLE ballots ADD COLUMN owner_domain text NOT NULL DEFAULT '';
ALTER TABLE cases ADD COLUMN min_owners integer NOT NULL DEFAULT 0 CHECK (min_owners >= 0);
ALTER TABLE cases ADD COLUMN approving_owners integer NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE cases DROP COLUMN approving_owners;
ALTER TABLE cases DROP COLUMN min_owners;
ALTER TABLE ballots DROP COLUMN owner_domain;
