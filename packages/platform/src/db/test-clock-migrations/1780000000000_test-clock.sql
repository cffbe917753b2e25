-- Up Migration
-- The sandbox's test clock (docs/design/agents.md#sandbox): how far the instance's clock is ahead of
-- the wall clock. One row; it only grows (POST /v1/test/clock/advance).
CREATE TABLE test_clock (
  id          boolean PRIMARY KEY DEFAULT true CHECK (id),
  offset_ms   bigint NOT NULL DEFAULT 0 CHECK (offset_ms >= 0),
  advanced_at timestamptz
);
INSERT INTO test_clock (id, offset_ms) VALUES (true, 0);

-- Down Migration
DROP TABLE test_clock;
