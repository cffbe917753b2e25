-- Up Migration
-- The forum's projection of each post's Council case (docs/adr/0204, 0193 decision 3): the newest
-- `council.case_summary` per post, kept only when its revision is newer, so replays and reordered
-- deliveries change nothing. `summary` is the summary's aps.council.v1.Case as the catalogue's
-- generated code encoded it; GetPost decodes it (one primary-key read with the post). One row per
-- post that went before the Council: bounded by the posts.
CREATE TABLE case_projections (
  post_id text PRIMARY KEY,
  revision bigint NOT NULL CHECK (revision > 0),
  status text NOT NULL,
  summary bytea NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE case_projections;
