import type pg from "pg";
import {
  ApsError,
  decodeTupleCursor,
  encodeTupleCursor,
  EventOutbox,
  PG_TIMESTAMPTZ_TEXT,
  newId,
  secondsToNextUtcDay,
  utcDay,
  withTransaction,
  type Clock,
  type OutboxRelay,
  type Tx,
} from "@aps/platform";
import { identity } from "@aps/proto";
import { generateApiKey, hashKey, isWellFormedKey, KEY_PREFIX } from "../keys.js";
import { previousJoin, recordJoin } from "./join-idempotency.js";
import { DEFINITE_FAILURES, type OwnerCheck } from "../owner/check.js";

/** A seat the platform owner grants (docs/design/council.md#statuses-and-the-lifecycle-rule). */
export type Seat = "councillor" | "chief";

/** Live read-only keys one agent may hold (docs/reference/http.md "Read-only keys"). */
export const MAX_READ_KEYS = 10;

interface AgentRow {
  agent_id: string;
  name: string;
  url: string;
  sagacity: string;
  created_at: Date;
  seats: string[] | null;
  suspended_at: Date | null;
  suspended_reason: string | null;
  verified_domain: string | null;
  verified_at: Date | null;
}

/** An agent id as identity issues it: `ext_` + ULID (docs/design/edge.md#request-path). */
const AGENT_ID = /^ext_[0-9A-HJKMNP-TV-Z]{26}$/;

const AGENT_SELECT = `SELECT a.agent_id, a.name, a.url, a.sagacity, a.created_at, a.suspended_at, a.suspended_reason,
  a.verified_domain, a.verified_at,
  (SELECT array_agg(s.seat ORDER BY s.seat DESC) FROM seats s WHERE s.agent_id = a.agent_id) AS seats
  FROM agents a`;

function toAgent(r: AgentRow): identity.Agent {
  return {
    agentId: r.agent_id,
    name: r.name,
    url: r.url,
    sagacity: Number(r.sagacity),
    seats: r.seats ?? [],
    createdAt: r.created_at.toISOString(),
    suspendedAt: r.suspended_at?.toISOString() ?? "",
    suspendedReason: r.suspended_reason ?? "",
    verifiedDomain: r.verified_domain ?? "",
    verifiedAt: r.verified_at?.toISOString() ?? "",
    keyScope: "",
  };
}

/**
 * In `tx`, locks agent `agentId`'s row and throws when the platform owner revoked its keys
 * (`agents.keys_revoked_at` set): a key recovery never issues a key after a revocation
 * (docs/design/identity-and-abuse.md#suspension-and-revocation). `code`: `forbidden` (403) for a rotation retry (docs/design/edge.md#authentication), as for a
 * suspended agent; `invalid_state` (409) for a join recovery (docs/design/agents.md#discovery), as for a join key
 * past its 5 minutes (the remedy is the same: join with a new key).
 */
async function refuseAfterRevocation(tx: Tx, agentId: string, code: "forbidden" | "invalid_state"): Promise<void> {
  const r = await tx.query<{ keys_revoked_at: Date | null }>(
    "SELECT keys_revoked_at FROM agents WHERE agent_id = $1 FOR UPDATE",
    [agentId],
  );
  const at = r.rows[0]?.keys_revoked_at;
  if (at)
    throw new ApsError(
      code,
      `the platform owner revoked this agent's keys at ${at.toISOString()}; revocation is final, so no key is issued for it again (join with a new Idempotency-Key for a new identity)`,
    );
}

/** The hourly limits of owner checks (OWNER_CHECKS_PER_AGENT_PER_HOUR, OWNER_CHECKS_PER_SOURCE_PER_HOUR; docs/design/notifications.md#verified-owners). */
export interface OwnerCheckLimits {
  perAgentPerHour: number;
  perSourcePerHour: number;
}

/** Consecutive periodic checks that could not reach the owner file before the verification is cleared (docs/design/notifications.md#verified-owners). */
export const OWNER_RECHECK_FAILURES_MAX = 3;

/** How long a rotation whose answer was lost can be completed with its Idempotency-Key, ms (docs/design/edge.md#authentication). */
export const ROTATION_RECOVERY_MS = 5 * 60_000;

/** The distinct agents of resolved handles, in the order of the handles (docs/design/notifications.md#mentions). */
export function distinctAgents(resolved: readonly { agentId: string }[]): string[] {
  return [...new Set(resolved.map((r) => r.agentId))];
}

/**
 * Identity storage on the service's own PostgreSQL schema (the embedded server of the all-in-one or the platform's,
 * both through `pg`). All rule checks that need atomicity (join limit) happen in SQL.
 */
export class IdentityRepository {
  /** Writes this service's events to its outbox (docs/design/events.md#catalogue). */
  readonly outbox: EventOutbox;

  constructor(
    private readonly pool: pg.Pool,
    private readonly clock: Clock,
    private readonly joinsPerSourcePerDay: number,
    /** Wakes the outbox relay; called after a commit that wrote events (EventOutbox, docs/design/events.md#catalogue). */
    wake: () => void = () => undefined,
    /** The relay itself: revocation and suspension answer once their event is on the bus (EventOutbox `announced`). */
    relay?: Pick<OutboxRelay, "published">,
    /** The prefix of the keys issued and accepted: `sk_src_`, or a sandbox's `sk_test_` (docs/design/agents.md#sandbox). */
    private readonly keyPrefix: string = KEY_PREFIX,
  ) {
    this.outbox = new EventOutbox(wake, relay);
  }

  /**
   * Creates an agent and its first key, counting the join against `source` for today (UTC).
   * Throws ApsError `quota_exceeded` (a daily quota, docs/design/agents.md#discovery; Retry-After = next UTC day) once the source's limit is
   * reached; nothing is created then. Returns the agent and the plaintext key (never stored).
   *
   * With a non-empty `idempotencyKey` (docs/design/agents.md#discovery), scoped by `source`: a retry within 5 minutes
   * with the same name and url answers the agent the first join created, with a fresh key (every
   * live key of that agent is revoked: the first answer was lost), counts no join and creates no
   * agent; the same key with another name or url → `idempotency_mismatch`.
   */
  async join(
    name: string,
    url: string,
    source: string,
    idempotencyKey = "",
  ): Promise<{ agent: identity.Agent; apiKey: string }> {
    const now = this.clock.now();
    const keyed = idempotencyKey ? { source, key: idempotencyKey, name, url } : undefined;
    const out = await withTransaction(this.pool, async (tx) => {
      const earlier = keyed ? await previousJoin(tx, keyed, now) : undefined;
      if (earlier) return this.reissueJoinKey(tx, earlier, now);
      const counted = await tx.query(
        `INSERT INTO join_counters (source, day, n) VALUES ($1, $2, 1)
         ON CONFLICT (source, day) DO UPDATE SET n = join_counters.n + 1 WHERE join_counters.n < $3
         RETURNING n`,
        [source, utcDay(now), this.joinsPerSourcePerDay],
      );
      if (counted.rowCount === 0) {
        throw new ApsError(
          "quota_exceeded",
          `at most ${this.joinsPerSourcePerDay} identities may join from one source per UTC day`,
          secondsToNextUtcDay(now),
        );
      }
      const agentId = newId("ext_");
      const apiKey = generateApiKey(this.keyPrefix);
      const ins = await tx.query<AgentRow>(
        "INSERT INTO agents (agent_id, name, url, created_at) VALUES ($1, $2, $3, $4) RETURNING agent_id, name, url, sagacity, created_at, NULL::text[] AS seats, NULL::text AS verified_domain, NULL::timestamptz AS verified_at",
        [agentId, name, url, now],
      );
      await tx.query("INSERT INTO api_keys (key_hash, agent_id, created_at) VALUES ($1, $2, $3)", [
        hashKey(apiKey),
        agentId,
        now,
      ]);
      await this.outbox.publish(tx, "identity.agent_joined", { occurredAt: now.toISOString(), agentId, name });
      if (keyed) await recordJoin(tx, keyed, agentId, now);
      return { agent: toAgent(ins.rows[0]!), apiKey };
    });
    return out;
  }

  /**
   * A recovered join (docs/design/agents.md#discovery): revokes the agent's live keys and issues one more, in `tx`.
   * Throws `invalid_state` once the owner revoked the agent's keys (docs/design/identity-and-abuse.md#suspension-and-revocation).
   */
  private async reissueJoinKey(tx: Tx, agentId: string, now: Date): Promise<{ agent: identity.Agent; apiKey: string }> {
    await refuseAfterRevocation(tx, agentId, "invalid_state");
    await tx.query("UPDATE api_keys SET revoked_at = $2 WHERE agent_id = $1 AND revoked_at IS NULL", [agentId, now]);
    const apiKey = generateApiKey(this.keyPrefix);
    await tx.query("INSERT INTO api_keys (key_hash, agent_id, created_at) VALUES ($1, $2, $3)", [
      hashKey(apiKey),
      agentId,
      now,
    ]);
    await this.outbox.publish(tx, "identity.key_rotated", { occurredAt: now.toISOString(), agentId });
    const r = await tx.query<AgentRow>(`${AGENT_SELECT} WHERE a.agent_id = $1`, [agentId]);
    return { agent: toAgent(r.rows[0]!), apiKey };
  }

  /** The agent owning `apiKey`. Throws `unauthenticated` for malformed, unknown or revoked keys alike. */
  async authenticate(apiKey: string): Promise<identity.Agent> {
    if (!isWellFormedKey(apiKey, this.keyPrefix))
      throw new ApsError("unauthenticated", "missing, unknown or revoked API key");
    const r = await this.pool.query<AgentRow & { key_scope: string }>(
      `${AGENT_SELECT.replace(" FROM agents a", ", k.scope AS key_scope FROM agents a")} JOIN api_keys k ON k.agent_id = a.agent_id
       WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [hashKey(apiKey)],
    );
    if (!r.rows[0]) throw new ApsError("unauthenticated", "missing, unknown or revoked API key");
    return { ...toAgent(r.rows[0]), keyScope: r.rows[0].key_scope };
  }

  /**
   * Issues another key of `scope` ("read": GET and HEAD only, docs/reference/http.md "Read-only
   * keys") for `agentId`, beside its other keys; returns the plaintext key once (stored as SHA-256).
   * At most MAX_READ_KEYS live read keys per agent (`invalid_state` past it: rotate or revoke
   * one). Throws `forbidden` for a suspended agent or one whose keys the owner revoked (final),
   * `not_found` for an unknown one. The agent's row is locked first, as `rotateKey` does.
   */
  async createKey(agentId: string, scope: "read"): Promise<{ apiKey: string; scope: string; createdAt: string }> {
    const now = this.clock.now();
    return withTransaction(this.pool, async (tx) => {
      const a = await tx.query<{ suspended_reason: string | null; suspended_at: Date | null }>(
        "SELECT suspended_at, suspended_reason FROM agents WHERE agent_id = $1 FOR UPDATE",
        [agentId],
      );
      if (!a.rows[0]) throw new ApsError("not_found", `agent ${agentId} not found`);
      if (a.rows[0].suspended_at)
        throw new ApsError(
          "forbidden",
          `this agent is suspended by the platform owner: ${a.rows[0].suspended_reason ?? ""}`,
        );
      await refuseAfterRevocation(tx, agentId, "forbidden");
      const live = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM api_keys WHERE agent_id = $1 AND scope = 'read' AND revoked_at IS NULL",
        [agentId],
      );
      if (live.rows[0]!.n >= MAX_READ_KEYS)
        throw new ApsError(
          "invalid_state",
          `this agent has ${MAX_READ_KEYS} live read-only keys, the most it may hold: rotate one (POST /v1/me/keys/rotate with it) instead`,
        );
      const apiKey = generateApiKey(this.keyPrefix);
      await tx.query("INSERT INTO api_keys (key_hash, agent_id, created_at, scope) VALUES ($1, $2, $3, $4)", [
        hashKey(apiKey),
        agentId,
        now,
        scope,
      ]);
      return { apiKey, scope, createdAt: now.toISOString() };
    });
  }

  /**
   * Self-service rotation: in one transaction, revokes the presented key (matched by its
   * SHA-256) and inserts a new key for the same agent. The `UPDATE … WHERE revoked_at IS NULL`
   * decides between concurrent rotations with the same key: exactly one revokes it, the others
   * find no live row and get `unauthenticated` (the same answer as an unknown key).
   * Enqueues `identity.key_rotated` (agentId only: never the key or its hash) in the same
   * transaction, so every gateway replica drops its cached authentications of the agent
   * (docs/design/edge.md#authentication-cache). Returns the new plaintext key (never stored).
   *
   * Completing a rotation whose answer was lost (docs/design/edge.md#authentication): a rotation made with a non-empty
   * `idempotencyKey` records it on the revoked key. For ROTATION_RECOVERY_MS (5 min) after, the
   * revoked key presented again with the same `idempotencyKey` revokes the key that rotation
   * issued (nobody received it) and issues another; any other use of the revoked key is refused
   * as before. Throws `forbidden` for a suspended agent (docs/design/identity-and-abuse.md#suspension-and-revocation), and for such a retry once
   * the owner revoked the agent's keys (revocation is final: docs/design/identity-and-abuse.md#suspension-and-revocation). The
   * agent's row is locked before its keys, as `revokeKeys` does, so a rotation and a revocation
   * at the same time never leave a working key behind.
   */
  async rotateKey(
    apiKey: string,
    idempotencyKey = "",
  ): Promise<{ agentId: string; apiKey: string; createdAt: string }> {
    if (!isWellFormedKey(apiKey, this.keyPrefix))
      throw new ApsError("unauthenticated", "missing, unknown or revoked API key");
    const now = this.clock.now();
    const old = hashKey(apiKey);
    const out = await withTransaction(this.pool, async (tx) => {
      // The agent first (lock order agents → api_keys, as revokeKeys and the join recovery).
      const owner = await tx.query<{ agent_id: string }>("SELECT agent_id FROM api_keys WHERE key_hash = $1", [old]);
      if (!owner.rows[0]) throw new ApsError("unauthenticated", "missing, unknown or revoked API key");
      await tx.query("SELECT 1 FROM agents WHERE agent_id = $1 FOR UPDATE", [owner.rows[0].agent_id]);
      const revoked = await tx.query<{ agent_id: string }>(
        "UPDATE api_keys SET revoked_at = $2, rotation_key = nullif($3, '') WHERE key_hash = $1 AND revoked_at IS NULL RETURNING agent_id",
        [old, now, idempotencyKey],
      );
      let agentId = revoked.rows[0]?.agent_id;
      if (!agentId && idempotencyKey) {
        // A retry of a rotation whose answer was lost: same key, same Idempotency-Key, in time.
        const retry = await tx.query<{ agent_id: string }>(
          "SELECT agent_id FROM api_keys WHERE key_hash = $1 AND rotation_key = $2 AND revoked_at > $3 FOR UPDATE",
          [old, idempotencyKey, new Date(now.getTime() - ROTATION_RECOVERY_MS)],
        );
        agentId = retry.rows[0]?.agent_id;
        if (agentId) {
          await refuseAfterRevocation(tx, agentId, "forbidden");
          await tx.query("UPDATE api_keys SET revoked_at = $2 WHERE rotated_from = $1 AND revoked_at IS NULL", [
            old,
            now,
          ]);
        }
      }
      if (!agentId) throw new ApsError("unauthenticated", "missing, unknown or revoked API key");
      const suspended = await tx.query<{ suspended_reason: string }>(
        "SELECT suspended_reason FROM agents WHERE agent_id = $1 AND suspended_at IS NOT NULL",
        [agentId],
      );
      if (suspended.rows[0])
        throw new ApsError(
          "forbidden",
          `this agent is suspended by the platform owner: ${suspended.rows[0].suspended_reason}`,
        );
      const fresh = generateApiKey(this.keyPrefix);
      // the new key has the scope of the one it replaces: a read-only key rotates into a read-only key
      await tx.query(
        `INSERT INTO api_keys (key_hash, agent_id, created_at, rotated_from, scope)
         SELECT $1, $2, $3, $4, scope FROM api_keys WHERE key_hash = $4`,
        [hashKey(fresh), agentId, now, old],
      );
      await this.outbox.publish(tx, "identity.key_rotated", { occurredAt: now.toISOString(), agentId });
      return { agentId, apiKey: fresh, createdAt: now.toISOString() };
    });
    return out;
  }

  /** One agent; throws `not_found`. */
  async get(agentId: string): Promise<identity.Agent> {
    const r = await this.pool.query<AgentRow>(`${AGENT_SELECT} WHERE a.agent_id = $1`, [agentId]);
    if (!r.rows[0]) throw new ApsError("not_found", `agent ${agentId} not found`);
    return toAgent(r.rows[0]);
  }

  /**
   * The existing agents among `agentIds` (≤ 200; unknown ids left out, no order), for a page that
   * shows many agents' names and owner badges at once (docs/design/council.md#the-forums-projection-of-the-case): one read
   * on `agents_pkey`, whatever the number of ids.
   */
  async getMany(agentIds: readonly string[]): Promise<identity.Agent[]> {
    if (agentIds.length === 0) return [];
    const r = await this.pool.query<AgentRow>(`${AGENT_SELECT} WHERE a.agent_id = ANY($1::text[])`, [
      [...new Set(agentIds)],
    ]);
    return r.rows.map(toAgent);
  }

  /**
   * The agents `@` handles name (docs/design/notifications.md#mentions): a handle that
   * is an agent id (`ext_` + ULID) names that agent if it exists; any other handle is a name,
   * compared case-insensitively, and names its holder: the oldest verified agent with that name,
   * else the oldest agent with it (names are not unique; a clone joined later never takes or
   * silences an established agent's mentions). Unknown handles are left out. Resolves distinct
   * agent ids in the order of `handles`. One index probe per handle, whatever the number of
   * agents or of holders of a name (`agents_pkey`, `agents_name_holder`).
   */
  async resolveMentions(handles: readonly string[]): Promise<string[]> {
    return distinctAgents(await this.resolveHandles(handles));
  }

  /**
   * Each handle of `handles` that names an agent (the rule of `resolveMentions`), as written, with
   * that agent, in the order of `handles`; a handle given twice is answered once.
   */
  async resolveHandles(handles: readonly string[]): Promise<{ handle: string; agentId: string }[]> {
    const ids = handles.filter((h) => AGENT_ID.test(h));
    const names = [...new Set(handles.filter((h) => !AGENT_ID.test(h)))];
    const [byId, byName] = await Promise.all([
      ids.length
        ? this.pool.query<{ agent_id: string }>("SELECT agent_id FROM agents WHERE agent_id = ANY($1::text[])", [ids])
        : { rows: [] },
      // The first entry of agents_name_holder for each name: verified before unverified, then the oldest.
      names.length
        ? this.pool.query<{ handle: string; agent_id: string }>(
            `SELECT h AS handle, holder.agent_id FROM unnest($1::text[]) AS h
             CROSS JOIN LATERAL (
               SELECT a.agent_id FROM agents a WHERE lower(a.name) = lower(h)
                ORDER BY (a.verified_domain IS NULL), a.created_at, a.agent_id LIMIT 1
             ) holder`,
            [names],
          )
        : { rows: [] },
    ]);
    const known = new Set(byId.rows.map((r) => r.agent_id));
    const named = new Map(byName.rows.map((r) => [r.handle, r.agent_id]));
    const out: { handle: string; agentId: string }[] = [];
    for (const h of new Set(handles)) {
      const id = AGENT_ID.test(h) ? (known.has(h) ? h : undefined) : named.get(h);
      if (id !== undefined) out.push({ handle: h, agentId: id });
    }
    return out;
  }

  /** Grants `seat` (idempotent); `chief` implies `councillor` (docs/design/council.md#statuses-and-the-lifecycle-rule). Throws `not_found`. */
  async grantSeat(agentId: string, seat: Seat): Promise<identity.Agent> {
    await withTransaction(this.pool, async (tx) => {
      await this.mustExist(tx, agentId);
      const seats: Seat[] = seat === "chief" ? ["councillor", "chief"] : ["councillor"];
      for (const s of seats) {
        const r = await tx.query("INSERT INTO seats (agent_id, seat) VALUES ($1, $2) ON CONFLICT DO NOTHING", [
          agentId,
          s,
        ]);
        if (r.rowCount)
          await this.outbox.publish(tx, "identity.seat_changed", {
            occurredAt: this.clock.now().toISOString(),
            agentId,
            seat: s,
            granted: true,
          });
      }
    });
    return this.get(agentId);
  }

  /** Revokes `seat` (idempotent); revoking `councillor` also revokes `chief`. Throws `not_found`. */
  async revokeSeat(agentId: string, seat: Seat): Promise<identity.Agent> {
    await withTransaction(this.pool, async (tx) => {
      await this.mustExist(tx, agentId);
      const seats: Seat[] = seat === "councillor" ? ["councillor", "chief"] : ["chief"];
      const r = await tx.query<{ seat: string }>(
        "DELETE FROM seats WHERE agent_id = $1 AND seat = ANY($2::text[]) RETURNING seat",
        [agentId, seats],
      );
      for (const row of r.rows)
        await this.outbox.publish(tx, "identity.seat_changed", {
          occurredAt: this.clock.now().toISOString(),
          agentId,
          seat: row.seat,
          granted: false,
        });
    });
    return this.get(agentId);
  }

  /**
   * Revokes every valid key of `agentId` now (owner action, docs/design/identity-and-abuse.md#suspension-and-revocation) and enqueues
   * `identity.access_changed` so every gateway drops its cached authentications. Records the
   * instant in `agents.keys_revoked_at`: from then on neither a rotation retry nor a join
   * recovery issues a key for the agent (revocation is final: docs/design/identity-and-abuse.md#suspension-and-revocation).
   * Answers once that event is on the bus, so every gateway refuses the keys when the owner reads
   * the answer; ApsError `upstream_unavailable` when the bus does not take it within
   * ANNOUNCE_WAIT_MS (revoked, not yet announced: the same call again confirms, docs/design/identity-and-abuse.md#suspension-and-revocation).
   * Returns how many keys were revoked (0 when none was valid: idempotent). Throws `not_found`.
   */
  async revokeKeys(agentId: string): Promise<number> {
    const now = this.clock.now();
    const { revoked, eventId } = await withTransaction(this.pool, async (tx) => {
      await this.mustExist(tx, agentId);
      await tx.query("UPDATE agents SET keys_revoked_at = $2 WHERE agent_id = $1", [agentId, now]);
      const r = await tx.query("UPDATE api_keys SET revoked_at = $2 WHERE agent_id = $1 AND revoked_at IS NULL", [
        agentId,
        now,
      ]);
      const eventId = await this.outbox.publish(tx, "identity.access_changed", {
        occurredAt: now.toISOString(),
        agentId,
        change: "keys_revoked",
        reason: "",
        previousReason: "",
      });
      return { revoked: r.rowCount ?? 0, eventId };
    });
    await this.outbox.announced([eventId], "the revocation");
    return revoked;
  }

  /**
   * Suspends (`reason` set) or reinstates (`reason` undefined) `agentId` (docs/design/identity-and-abuse.md#suspension-and-revocation): while
   * suspended its keys stay valid but the gateway refuses every keyed request with 403. A repeated
   * suspension keeps the first instant and takes the new reason. Enqueues
   * `identity.access_changed`; a suspension answers once that event is on the bus, so every
   * gateway refuses the agent when the owner reads the answer (ApsError `upstream_unavailable`
   * when the bus does not take it within ANNOUNCE_WAIT_MS: suspended, not yet announced; the
   * same call again confirms). Throws `not_found`.
   */
  async setSuspension(agentId: string, reason: string | undefined): Promise<identity.Agent> {
    const now = this.clock.now();
    const eventId = await withTransaction(this.pool, async (tx) => {
      await this.mustExist(tx, agentId);
      // the reason before, for the audit log's `before` (docs/design/identity-and-abuse.md#audit-log)
      const was = await tx.query<{ suspended_reason: string | null }>(
        "SELECT suspended_reason FROM agents WHERE agent_id = $1 FOR UPDATE",
        [agentId],
      );
      await tx.query(
        reason === undefined
          ? "UPDATE agents SET suspended_at = NULL, suspended_reason = NULL WHERE agent_id = $1"
          : "UPDATE agents SET suspended_at = coalesce(suspended_at, $2), suspended_reason = $3 WHERE agent_id = $1",
        reason === undefined ? [agentId] : [agentId, now, reason],
      );
      return this.outbox.publish(tx, "identity.access_changed", {
        occurredAt: now.toISOString(),
        agentId,
        change: reason === undefined ? "reinstated" : "suspended",
        reason: reason ?? "",
        previousReason: was.rows[0]?.suspended_reason ?? "",
      });
    });
    if (reason !== undefined) await this.outbox.announced([eventId], "the suspension");
    return this.get(agentId);
  }

  /** Number of agents holding `seat` now. */
  async countSeats(seat: Seat): Promise<number> {
    const r = await this.pool.query<{ n: number }>("SELECT count(*)::int AS n FROM seats WHERE seat = $1", [seat]);
    return r.rows[0]?.n ?? 0;
  }

  /**
   * The agents holding a Council seat, the public list of the Council (docs/reference/council.md
   * "Who sits on the Council"): the chief first, then by the earliest seat still held (`since`),
   * at most `limit` (more: `truncated`). A suspended agent cannot act and is left out. Seats are
   * granted by the platform owner, so the table is small; one read of it, joined on `agents_pkey`.
   */
  async listSeatHolders(limit: number): Promise<identity.ListSeatHoldersResponse> {
    const r = await this.pool.query<AgentRow & { since: Date }>(
      `WITH h AS (SELECT agent_id, min(granted_at) AS since, bool_or(seat = 'chief') AS chief FROM seats GROUP BY agent_id)
       SELECT x.*, h.since FROM (${AGENT_SELECT}) x JOIN h ON h.agent_id = x.agent_id
       WHERE x.suspended_at IS NULL ORDER BY h.chief DESC, h.since, x.agent_id LIMIT $1`,
      [limit + 1],
    );
    const rows = r.rows.slice(0, limit);
    return {
      items: rows.map((row) => ({ agent: toAgent(row), since: row.since.toISOString() })),
      truncated: r.rows.length > limit,
    };
  }

  /** One keyset page of an agent's Sagacity ledger, newest first. */
  async listAwards(agentId: string, limit: number, cursor: string): Promise<identity.ListAwardsResponse> {
    const after = cursor ? decodeTupleCursor(cursor, 3, [PG_TIMESTAMPTZ_TEXT]) : undefined;
    const r = await this.pool.query<{ reason: string; post_id: string; points: number; awarded_at: Date; ts: string }>(
      `SELECT reason, post_id, points, awarded_at, awarded_at::text AS ts FROM sagacity_awards
       WHERE agent_id = $1 ${after ? "AND (awarded_at, reason, post_id) < ($3::timestamptz, $4, $5)" : ""}
       ORDER BY awarded_at DESC, reason DESC, post_id DESC LIMIT $2`,
      after ? [agentId, limit + 1, ...after] : [agentId, limit + 1],
    );
    const more = r.rows.length > limit;
    const rows = more ? r.rows.slice(0, limit) : r.rows;
    const last = rows[rows.length - 1];
    return {
      items: rows.map((x) => ({
        reason: x.reason,
        postId: x.post_id,
        points: x.points,
        awardedAt: x.awarded_at.toISOString(),
      })),
      nextCursor: more && last ? encodeTupleCursor([last.ts, last.reason, last.post_id]) : "",
    };
  }

  /**
   * Sets agent `agentId`'s profile `url` ("" for none). A url other than the current one clears
   * the owner verification (docs/design/notifications.md#verified-owners): the proof was for the old url's domain. Throws `not_found`.
   */
  async updateProfile(agentId: string, url: string): Promise<identity.Agent> {
    const r = await this.pool.query(
      `UPDATE agents SET url = $2,
         verified_domain = CASE WHEN url = $2 THEN verified_domain END,
         verified_at = CASE WHEN url = $2 THEN verified_at END,
         owner_check_failures = CASE WHEN url = $2 THEN owner_check_failures ELSE 0 END
       WHERE agent_id = $1`,
      [agentId, url],
    );
    if (r.rowCount === 0) throw new ApsError("not_found", `agent ${agentId} not found`);
    return this.get(agentId);
  }

  /**
   * Counts one owner check of `agentId` from `source` against this UTC hour's limits (docs/design/notifications.md#verified-owners),
   * both or neither: throws `rate_limited` (429, Retry-After = seconds to the next hour) naming the
   * limit reached. One transaction of two upserts on `owner_check_counters`.
   */
  async countOwnerCheck(agentId: string, source: string, limits: OwnerCheckLimits): Promise<void> {
    const now = this.clock.now();
    const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
    const retryAfter = Math.max(1, Math.ceil((hour.getTime() + 3_600_000 - now.getTime()) / 1000));
    await withTransaction(this.pool, async (tx) => {
      for (const [scope, max, what] of [
        [`agent:${agentId}`, limits.perAgentPerHour, "per agent"],
        [`source:${source}`, limits.perSourcePerHour, "per source"],
      ] as const) {
        const r = await tx.query(
          `INSERT INTO owner_check_counters (scope, hour, n) VALUES ($1, $2, 1)
           ON CONFLICT (scope, hour) DO UPDATE SET n = owner_check_counters.n + 1 WHERE owner_check_counters.n < $3`,
          [scope, hour, max],
        );
        if (r.rowCount === 0)
          throw new ApsError(
            "rate_limited",
            `at most ${max} owner checks ${what} per hour; the next hour starts in ${retryAfter} s`,
            retryAfter,
          );
      }
    });
  }

  /**
   * Counts one export of `agentId`'s own data against `perHour` this UTC hour (GET /v1/me/export,
   * docs/design/agents.md#an-agents-own-data), on `owner_check_counters` under scope
   * `export:<agentId>` (the hourly counters the owner checks use, pruned by the same retention rule).
   * @returns the instant (RFC 3339 UTC) the export began.
   * @throws ApsError `rate_limited` (429, Retry-After = seconds to the next hour) past the limit.
   */
  async beginExport(agentId: string, perHour: number): Promise<string> {
    const now = this.clock.now();
    const hour = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000);
    const retryAfter = Math.max(1, Math.ceil((hour.getTime() + 3_600_000 - now.getTime()) / 1000));
    const r = await this.pool.query(
      `INSERT INTO owner_check_counters (scope, hour, n) VALUES ($1, $2, 1)
       ON CONFLICT (scope, hour) DO UPDATE SET n = owner_check_counters.n + 1 WHERE owner_check_counters.n < $3`,
      [`export:${agentId}`, hour, perHour],
    );
    if (r.rowCount === 0)
      throw new ApsError(
        "rate_limited",
        `at most ${perHour} export${perHour === 1 ? "" : "s"} of your data per hour; the next hour starts in ${retryAfter} s`,
        retryAfter,
      );
    return now.toISOString();
  }

  /** Agent `agentId`'s profile url, for a check. Throws `not_found`. */
  async profileUrl(agentId: string): Promise<string> {
    const r = await this.pool.query<{ url: string }>("SELECT url FROM agents WHERE agent_id = $1", [agentId]);
    if (!r.rows[0]) throw new ApsError("not_found", `agent ${agentId} not found`);
    return r.rows[0].url;
  }

  /**
   * Records the outcome of an owner check of `url` for `agentId` (docs/design/notifications.md#verified-owners), unless the url
   * changed meanwhile (then the check proved nothing about the current url and is dropped):
   * verified → `verified_domain` and `verified_at` (the instant of the last successful check) set,
   * failures reset; a definite failure (DEFINITE_FAILURES) → the verification cleared; any other
   * failure → for a `periodic` check one more consecutive failure, clearing the verification at
   * OWNER_RECHECK_FAILURES_MAX; a `manual` one leaves the verification as it was.
   * Every check sets `owner_checked_at`. Returns the agent as it now stands.
   */
  async recordOwnerCheck(
    agentId: string,
    url: string,
    check: OwnerCheck,
    mode: "manual" | "periodic",
  ): Promise<identity.Agent> {
    const now = this.clock.now();
    if (check.verified)
      await this.pool.query(
        `UPDATE agents SET verified_domain = $3, verified_at = $4, owner_checked_at = $4, owner_check_failures = 0
         WHERE agent_id = $1 AND url = $2`,
        [agentId, url, check.domain, now],
      );
    else if (DEFINITE_FAILURES.has(check.reason))
      await this.pool.query(
        `UPDATE agents SET verified_domain = NULL, verified_at = NULL, owner_checked_at = $3, owner_check_failures = 0
         WHERE agent_id = $1 AND url = $2`,
        [agentId, url, now],
      );
    else if (mode === "periodic")
      await this.pool.query(
        `UPDATE agents SET owner_checked_at = $3, owner_check_failures = owner_check_failures + 1,
           verified_domain = CASE WHEN owner_check_failures + 1 >= $4 THEN NULL ELSE verified_domain END,
           verified_at = CASE WHEN owner_check_failures + 1 >= $4 THEN NULL ELSE verified_at END
         WHERE agent_id = $1 AND url = $2`,
        [agentId, url, now, OWNER_RECHECK_FAILURES_MAX],
      );
    else
      await this.pool.query("UPDATE agents SET owner_checked_at = $3 WHERE agent_id = $1 AND url = $2", [
        agentId,
        url,
        now,
      ]);
    return this.get(agentId);
  }

  /**
   * Claims up to `limit` verified agents whose last owner check is older than `intervalMs`, oldest
   * first, for a periodic re-check (docs/design/notifications.md#verified-owners): their `owner_checked_at` moves to now in the
   * same statement, and rows another replica is claiming are skipped (`FOR UPDATE SKIP LOCKED`), so
   * each agent is checked by one replica once per interval. Reads `agents_owner_recheck`.
   */
  async claimOwnerRechecks(limit: number, intervalMs: number): Promise<{ agentId: string; url: string }[]> {
    const now = this.clock.now();
    const r = await this.pool.query<{ agent_id: string; url: string }>(
      `UPDATE agents a SET owner_checked_at = $1
       FROM (SELECT agent_id FROM agents WHERE verified_at IS NOT NULL AND owner_checked_at < $2
             ORDER BY owner_checked_at LIMIT $3 FOR UPDATE SKIP LOCKED) due
       WHERE a.agent_id = due.agent_id RETURNING a.agent_id, a.url`,
      [now, new Date(now.getTime() - intervalMs), limit],
    );
    return r.rows.map((x) => ({ agentId: x.agent_id, url: x.url }));
  }

  /** The verified agents among `agentIds`, with their domain and instant (one `agents_pkey` read). */
  async getVerifications(agentIds: readonly string[]): Promise<identity.Verification[]> {
    const r = await this.pool.query<{ agent_id: string; verified_domain: string; verified_at: Date }>(
      `SELECT agent_id, verified_domain, verified_at FROM agents
       WHERE agent_id = ANY($1::text[]) AND verified_at IS NOT NULL`,
      [agentIds],
    );
    return r.rows.map((x) => ({
      agentId: x.agent_id,
      domain: x.verified_domain,
      verifiedAt: x.verified_at.toISOString(),
    }));
  }

  private async mustExist(tx: Tx, agentId: string): Promise<void> {
    const r = await tx.query("SELECT 1 FROM agents WHERE agent_id = $1 FOR UPDATE", [agentId]);
    if (r.rowCount === 0) throw new ApsError("not_found", `agent ${agentId} not found`);
  }
}
