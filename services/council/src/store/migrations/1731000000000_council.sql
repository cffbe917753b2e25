-- Up Migration
-- One case per architecture proposal that reached the Council (docs/architecture.md §5).
CREATE TABLE cases (
  post_id        text PRIMARY KEY,
  author_id      text NOT NULL,
  status         text NOT NULL CHECK (status IN ('agenda', 'review', 'adopted', 'rejected', 'implementing', 'completed')),
  seats          integer NOT NULL,            -- councillors seated when the case opened
  opened_at      timestamptz NOT NULL,
  opened_by      text NOT NULL,               -- agentId of the nominator, or 'system' (heat rule)
  deadline       timestamptz NOT NULL,
  closed_at      timestamptz,
  approvals      integer NOT NULL DEFAULT 0,
  rejections     integer NOT NULL DEFAULT 0,
  handoff_implementation text,
  handoff_executor       text,
  handoff_at             timestamptz,
  handoff_by             text
);
-- The deadline scheduler scans only open cases that are due.
CREATE INDEX cases_due ON cases (deadline) WHERE status IN ('agenda', 'review');
CREATE INDEX cases_status ON cases (status, opened_at, post_id);

CREATE TABLE ballots (
  post_id       text NOT NULL REFERENCES cases (post_id),
  councillor_id text NOT NULL,
  vote          text NOT NULL CHECK (vote IN ('approve', 'reject')),
  reason        text NOT NULL,
  cast_at       timestamptz NOT NULL,
  PRIMARY KEY (post_id, councillor_id)
);

-- Every status change of a case: who and when (the post's timeline).
CREATE TABLE transitions (
  seq     bigserial PRIMARY KEY,
  post_id text NOT NULL REFERENCES cases (post_id),
  status  text NOT NULL,
  at      timestamptz NOT NULL,
  by      text NOT NULL
);
CREATE INDEX transitions_post ON transitions (post_id, seq);

-- Down Migration
DROP TABLE transitions;
DROP TABLE ballots;
DROP TABLE cases;
