import type pg from "pg";
import { utcDay, withTransaction } from "@aps/platform";

/** A cached translation row (docs/design/search-and-translation.md#machine-translation). */
export interface CachedTranslation {
  subject: string;
  version: string;
  lang: string;
  part: "full" | "title";
  sourceLang: string;
  title: string;
  body: string;
  engine: string;
  /** RFC 3339, UTC. */
  translatedAt: string;
}

/** Identifies one translation: what, which version of its original, into which language, which part. */
export interface TranslationKey {
  subject: string;
  version: string;
  lang: string;
  part: "full" | "title";
}

/** The lease key of a translation (`generation_leases.key`). */
export function leaseKey(k: TranslationKey): string {
  return `${k.subject}|${k.version}|${k.lang}|${k.part}`;
}

/**
 * One daily translation counter (a row of `quota_usage`, whose `agent_id` column holds the
 * counter's key): an agent's quota (`ext_…`), a client source's budget (`source:<abuseSource>`)
 * or the deployment's (`*`) — docs/design/search-and-translation.md#machine-translation, docs/design/identity-and-abuse.md#budgets-per-source.
 */
export interface QuotaCounter {
  /** `ext_…`, `source:…` or `*`; agent ids never start with `source:` or `*`. */
  key: string;
  /** New translations allowed per UTC day (0 = none). */
  limit: number;
}

/** Thrown inside `reserveAll`'s transaction to roll it back when `counter` is at its limit. */
class CounterFull extends Error {
  constructor(readonly counter: QuotaCounter) {
    super(`quota counter ${counter.key} is full`);
  }
}

/** The `quota_usage` key of the whole deployment's counter. */
export const GLOBAL_QUOTA_KEY = "*";

/** The `quota_usage` key of a client source's counter. */
export const sourceQuotaKey = (source: string) => `source:${source}`;

/** SQL access of the translation schema: the cache, generation leases and the daily quotas. */
export class TranslationRepository {
  constructor(private readonly pool: pg.Pool) {}

  /** The cached translation of `k`, if any. With part "title", a cached "full" row serves too. */
  async find(k: TranslationKey): Promise<CachedTranslation | undefined> {
    const parts = k.part === "title" ? ["full", "title"] : ["full"];
    const r = await this.pool.query<Record<string, unknown>>(
      `SELECT subject, version, lang, part, source_lang, title, body, engine, translated_at FROM translations
        WHERE subject = $1 AND version = $2 AND lang = $3 AND part = ANY($4::text[]) ORDER BY part LIMIT 1`,
      [k.subject, k.version, k.lang, parts],
    );
    return r.rows[0] ? toCached(r.rows[0]) : undefined;
  }

  /** Cached titles for many posts at once: `versions` maps post id → current version. */
  async findTitles(versions: Map<string, string>, lang: string): Promise<Map<string, CachedTranslation>> {
    if (versions.size === 0) return new Map();
    const ids = [...versions.keys()];
    const r = await this.pool.query<Record<string, unknown>>(
      `SELECT subject, version, lang, part, source_lang, title, body, engine, translated_at FROM translations
        WHERE subject = ANY($1::text[]) AND lang = $2 ORDER BY part`,
      [ids, lang],
    );
    const out = new Map<string, CachedTranslation>();
    for (const row of r.rows) {
      const c = toCached(row);
      if (versions.get(c.subject) === c.version && !out.has(c.subject)) out.set(c.subject, c);
    }
    return out;
  }

  /** Stores a successful translation (a concurrent identical insert is ignored). */
  async insert(t: CachedTranslation): Promise<void> {
    await this.pool.query(
      `INSERT INTO translations (subject, version, lang, part, source_lang, title, body, engine, translated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
      [t.subject, t.version, t.lang, t.part, t.sourceLang, t.title, t.body, t.engine, t.translatedAt],
    );
  }

  /**
   * Takes the generation lease of `key` for `holder` until `now + ttlMs`: true when it was free
   * or expired (its holder died), false while another holder has it.
   */
  async acquireLease(key: string, holder: string, now: Date, ttlMs: number): Promise<boolean> {
    const r = await this.pool.query(
      `INSERT INTO generation_leases (key, holder, expires_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
        WHERE generation_leases.expires_at < $4 RETURNING holder`,
      [key, holder, new Date(now.getTime() + ttlMs), now],
    );
    return r.rowCount === 1;
  }

  /** True while some holder's lease on `key` is unexpired at `now`. */
  async leaseHeld(key: string, now: Date): Promise<boolean> {
    const r = await this.pool.query(`SELECT 1 FROM generation_leases WHERE key = $1 AND expires_at >= $2`, [key, now]);
    return (r.rowCount ?? 0) > 0;
  }

  /** Releases `holder`'s lease on `key`. */
  async releaseLease(key: string, holder: string): Promise<void> {
    await this.pool.query(`DELETE FROM generation_leases WHERE key = $1 AND holder = $2`, [key, holder]);
  }

  /**
   * Counts one new translation in every counter of `counters` on the UTC day of `now`, all or
   * none, in one transaction that takes the counters' rows in the order given (callers pass the
   * deployment's first, then the source's, then the agent's, so concurrent reservations never
   * deadlock). Answers the first counter already at its limit (nothing counted), or undefined
   * when all were counted.
   */
  async reserveAll(counters: QuotaCounter[], now: Date): Promise<QuotaCounter | undefined> {
    const full = counters.find((c) => c.limit <= 0);
    if (full) return full;
    const day = utcDay(now);
    try {
      await withTransaction(this.pool, async (tx) => {
        for (const c of counters) {
          const r = await tx.query(
            `INSERT INTO quota_usage (agent_id, day, used) VALUES ($1, $2, 1)
             ON CONFLICT (agent_id, day) DO UPDATE SET used = quota_usage.used + 1 WHERE quota_usage.used < $3 RETURNING used`,
            [c.key, day, c.limit],
          );
          // a full counter rolls the whole reservation back
          if (r.rowCount !== 1) throw new CounterFull(c);
        }
      });
      return undefined;
    } catch (err) {
      if (err instanceof CounterFull) return err.counter;
      throw err;
    }
  }

  /** Gives back one reserved translation of each of `keys` (the engine failed: failures are not counted). */
  async refundAll(keys: string[], now: Date): Promise<void> {
    await this.pool.query(
      `UPDATE quota_usage SET used = greatest(used - 1, 0) WHERE agent_id = ANY($1::text[]) AND day = $2`,
      [keys, utcDay(now)],
    );
  }

  /** New translations `agentId` generated on the UTC day of `now`. */
  async quotaUsed(agentId: string, now: Date): Promise<number> {
    const r = await this.pool.query<{ used: string | number }>(
      `SELECT used FROM quota_usage WHERE agent_id = $1 AND day = $2`,
      [agentId, utcDay(now)],
    );
    return r.rows[0] ? Number(r.rows[0].used) : 0;
  }
}

function toCached(row: Record<string, unknown>): CachedTranslation {
  return {
    subject: row.subject as string,
    version: row.version as string,
    lang: row.lang as string,
    part: row.part as "full" | "title",
    sourceLang: row.source_lang as string,
    title: row.title as string,
    body: row.body as string,
    engine: row.engine as string,
    translatedAt: (row.translated_at as Date).toISOString(),
  };
}
