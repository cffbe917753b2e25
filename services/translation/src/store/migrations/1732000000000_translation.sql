-- Up Migration
-- Cached translations (docs/architecture.md §7): one row per (subject, version, lang, part), kept forever.
-- subject = a post id or "doc:<name>"; version = content hash of the original; part = "full"
-- (title + body, or a whole document) or "title" (list titles only).
CREATE TABLE translations (
  subject       text NOT NULL,
  version       text NOT NULL,
  lang          text NOT NULL,
  part          text NOT NULL CHECK (part IN ('full', 'title')),
  source_lang   text NOT NULL,
  title         text NOT NULL,
  body          text NOT NULL,
  engine        text NOT NULL,
  translated_at timestamptz NOT NULL,
  PRIMARY KEY (subject, version, lang, part)
);

-- Generation leases: the replica whose INSERT wins calls the engine; the others wait for the row
-- in `translations` (or for the lease to expire when its holder died).
CREATE TABLE generation_leases (
  key        text PRIMARY KEY,
  holder     text NOT NULL,
  expires_at timestamptz NOT NULL
);

-- New translations generated per key and UTC day (TRANSLATION_DAILY_QUOTA), shared by replicas.
CREATE TABLE quota_usage (
  agent_id text NOT NULL,
  day      date NOT NULL,
  used     integer NOT NULL,
  PRIMARY KEY (agent_id, day)
);

-- Down Migration
DROP TABLE quota_usage;
DROP TABLE generation_leases;
DROP TABLE translations;
