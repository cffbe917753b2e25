-- Up Migration
-- Shared per-minute request counters of the gateway (docs/architecture.md §4 "Rate limits", ADR 0070).
-- Layout required by rate-limiter-flexible's RateLimiterPostgres: key = "<policy>:<agentId|ip>"
-- (never an API key), points = requests counted in the window, expire = window end (epoch ms).
CREATE TABLE rate_limits (
  key    varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
CREATE INDEX rate_limits_expire ON rate_limits (expire);

-- Down Migration
DROP TABLE rate_limits;
