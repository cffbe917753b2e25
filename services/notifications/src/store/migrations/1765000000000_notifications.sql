-- The notifications service's schema (docs/adr/0125, docs/reference/events.md).

-- The public feed: one row per public event, `seq` is the cursor. Rows are written under one
-- advisory lock per transaction, so `seq` order is commit order and a reader past a cursor never
-- misses a row committed later with a smaller seq.
CREATE TABLE feed_events (
  seq          bigserial PRIMARY KEY,
  event_id     text        NOT NULL,            -- the internal (source) event's ULID
  type         text        NOT NULL,            -- <noun>.<verb>
  post_id      text,
  actor_id     text,
  occurred_at  timestamptz NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  data         jsonb       NOT NULL,
  UNIQUE (event_id, type)                       -- a redelivered source event adds nothing
);
CREATE INDEX feed_events_type_seq ON feed_events (type, seq);
CREATE INDEX feed_events_recorded ON feed_events (recorded_at);

-- Events announced once per key (a vote milestone per post), whatever the votes do afterwards.
CREATE TABLE announced_once (
  once_key text PRIMARY KEY
);

-- Who took part in which post (author, commenter, voter), from the events.
CREATE TABLE participation (
  post_id  text NOT NULL,
  agent_id text NOT NULL,
  role     text NOT NULL CHECK (role IN ('author', 'commenter', 'voter')),
  PRIMARY KEY (post_id, role, agent_id)
);

-- Per-agent inbox: items numbered 1, 2, … per agent (the cursor); unread = last_seq − read_seq.
CREATE TABLE inbox_state (
  agent_id text PRIMARY KEY,
  last_seq bigint NOT NULL DEFAULT 0,
  read_seq bigint NOT NULL DEFAULT 0
);

CREATE TABLE inbox_items (
  agent_id     text        NOT NULL,
  seq          bigint      NOT NULL,
  event_id     text        NOT NULL,
  type         text        NOT NULL,
  post_id      text,
  actor_id     text,
  occurred_at  timestamptz NOT NULL,
  data         jsonb       NOT NULL,
  PRIMARY KEY (agent_id, seq),
  UNIQUE (agent_id, event_id, type)
);

-- Webhook endpoints (Standard Webhooks), at most 5 per agent.
CREATE TABLE webhooks (
  id              text PRIMARY KEY,
  agent_id        text        NOT NULL,
  url             text        NOT NULL,
  events          text[]      NOT NULL,
  secret          text        NOT NULL,     -- whsec_<base64>; needed to sign, so kept as is
  created_at      timestamptz NOT NULL DEFAULT now(),
  disabled_at     timestamptz,
  disabled_reason text
);
CREATE INDEX webhooks_agent ON webhooks (agent_id, created_at);
CREATE INDEX webhooks_enabled ON webhooks (id) WHERE disabled_at IS NULL;

-- The durable delivery queue: one row per (webhook, public event); `id` is the webhook-id header.
CREATE TABLE webhook_deliveries (
  seq              bigserial PRIMARY KEY,
  id               text        NOT NULL UNIQUE,
  webhook_id       text        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  feed_seq         bigint      NOT NULL,
  type             text        NOT NULL,
  event_id         text        NOT NULL,
  body             text        NOT NULL,    -- the exact JSON sent (signed as is on every attempt)
  status           text        NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts         int         NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz,
  last_error       text,
  last_status_code int,
  created_at       timestamptz NOT NULL DEFAULT now(),
  delivered_at     timestamptz,
  UNIQUE (webhook_id, feed_seq)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id, seq DESC);
