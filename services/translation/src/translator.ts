import { createHash, randomUUID } from "node:crypto";
import { ApsError, secondsToNextUtcDay, type Clock, type ForumClient, type Logger } from "@aps/platform";
import type { forum } from "@aps/proto";
import { EngineError, type TranslationEngine } from "./engines/types.js";
import { detectLang, type Lang } from "./langs.js";
import { translateMarkdown } from "./markdown.js";
import { zeroSeries } from "@aps/platform";
import { cacheLookups, engineCalls } from "./metrics.js";
import {
  GLOBAL_QUOTA_KEY,
  leaseKey,
  sourceQuotaKey,
  type CachedTranslation,
  type QuotaCounter,
  type TranslationKey,
  type TranslationRepository,
} from "./store/repository.js";

/** A post (or its title) in a language: cached/generated translation or the original. */
export interface TranslatedPost {
  id: string;
  lang: Lang;
  sourceLang: Lang;
  title: string;
  body: string;
  /** undefined when the original is returned. */
  engine: string | undefined;
  machineTranslation: boolean;
  version: string;
  /** RFC 3339; undefined for the original. */
  translatedAt: string | undefined;
}

/** Tunables of the translator. */
export interface TranslatorOptions {
  /** New translations per key per UTC day (`TRANSLATION_DAILY_QUOTA`). */
  dailyQuota: number;
  /**
   * New translations per client source per UTC day, every key of the source together
   * (`TRANSLATION_DAILY_QUOTA_PER_SOURCE`, docs/design/identity-and-abuse.md#budgets-per-source); default 5 × dailyQuota.
   */
  sourceQuota?: number;
  /** New translations of the whole deployment per UTC day (`TRANSLATION_DAILY_QUOTA_GLOBAL`, docs/design/identity-and-abuse.md#budgets-per-source); default 10 000. */
  globalQuota?: number;
  /** Engine request timeout, ms (`TRANSLATION_TIMEOUT_MS`); the generation lease lasts 3× this (≥ 60 s). */
  timeoutMs: number;
  clock: Clock;
  log: Logger;
}

/** The content version of a post: first 16 hex digits of SHA-256 over title, NUL, body. */
export function versionOf(title: string, body: string): string {
  return createHash("sha256").update(title).update("\0").update(body).digest("hex").slice(0, 16);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** TRANSLATION_DAILY_QUOTA_GLOBAL when none is given (docs/design/identity-and-abuse.md#budgets-per-source). */
export const DEFAULT_GLOBAL_QUOTA = 10_000;

/** Who asks for a translation: the agent (`""` = anonymous) and its client source (`""` = none known). */
export interface TranslationCaller {
  agentId: string;
  /** `abuseSource` of the request as the gateway computed it (docs/design/identity-and-abuse.md#client-source-and-abuse-source); "" = counted per agent only. */
  source: string;
}

/**
 * The translation rules of docs/design/search-and-translation.md#machine-translation and the seed ("Translation rules"): cache per
 * (subject, version, lang, part) forever; anonymous callers only read the cache
 * (`translation_not_cached`); a keyed caller generates within the daily quota of its key, the
 * daily budget of its client source and the deployment's daily budget (`quota_exceeded`,
 * Retry-After to the next UTC midnight; docs/design/identity-and-abuse.md#budgets-per-source), while cached translations
 * are served whatever is left; a requested language equal to the detected source
 * answers the original (no engine call, not counted). Concurrent identical generations call the
 * engine once: in-process single-flight plus a lease row in PostgreSQL that replicas share.
 * Engine failures are never cached and never counted against the quota.
 */
/** The `engine` label of the jobs refused because no engine is configured (outcome `unavailable`). */
export const NO_ENGINE = "none";

export class Translator {
  private readonly inflight = new Map<string, Promise<CachedTranslation>>();

  constructor(
    private readonly repo: TranslationRepository,
    private readonly forum: ForumClient,
    private readonly engine: TranslationEngine | undefined,
    private readonly opts: TranslatorOptions,
  ) {
    zeroSeries(cacheLookups, { result: ["hit", "miss"] });
    zeroSeries(engineCalls, {
      engine: [engine?.name ?? NO_ENGINE],
      outcome: ["ok", "unsupported_pair", "unavailable"],
    });
  }

  /** New translations one client source may generate per UTC day. */
  get sourceQuota(): number {
    return this.opts.sourceQuota ?? 5 * this.opts.dailyQuota;
  }

  /** New translations the deployment may generate per UTC day. */
  get globalQuota(): number {
    return this.opts.globalQuota ?? DEFAULT_GLOBAL_QUOTA;
  }

  /** The engine's name, or undefined when none is configured. */
  get engineName(): string | undefined {
    return this.engine?.name;
  }

  /** Post `postId` in `lang` for `caller` (agentId "" = anonymous). Throws not_found for an unknown post. */
  async post(postId: string, lang: Lang, caller: TranslationCaller): Promise<TranslatedPost> {
    const detail = await this.forum.getPost({ id: postId });
    const p = detail.post!;
    const version = versionOf(p.title, p.body);
    const sourceLang = detectLang(`${p.title}\n\n${p.body}`);
    if (sourceLang === lang) return original(p, lang, version);
    const t = await this.obtain({ subject: p.id, version, lang, part: "full" }, sourceLang, caller, async (e) => ({
      title: await translateMarkdown(p.title, (x) => e.translate(x, sourceLang, lang)),
      body: await translateMarkdown(p.body, (x) => e.translate(x, sourceLang, lang)),
    }));
    return fromCache(t, lang);
  }

  /**
   * Titles of `ids` in `lang`. Unknown posts, and posts whose translation is not cached for an
   * anonymous caller, beyond the caller's quota or of a pair the engine lacks, go to `missing`.
   * An engine outage (or no engine, when something must be generated) throws upstream_unavailable.
   */
  async titles(
    ids: string[],
    lang: Lang,
    caller: TranslationCaller,
  ): Promise<{ items: TranslatedPost[]; missing: string[] }> {
    const posts = (await this.forum.getPosts({ ids })).items;
    const byId = new Map(posts.map((p) => [p.id, p]));
    const out = new Map<string, TranslatedPost>();
    const todo: { p: forum.Post; version: string; sourceLang: Lang }[] = [];
    const versions = new Map<string, string>();
    for (const p of posts) {
      const version = versionOf(p.title, p.body);
      const sourceLang = detectLang(`${p.title}\n\n${p.body}`);
      if (sourceLang === lang) out.set(p.id, original(p, lang, version));
      else {
        todo.push({ p, version, sourceLang });
        versions.set(p.id, version);
      }
    }
    const cached = await this.repo.findTitles(versions, lang);
    let quotaLeft = true;
    const gen: typeof todo = [];
    for (const t of todo) {
      const c = cached.get(t.p.id);
      cacheLookups.inc({ result: c ? "hit" : "miss" });
      if (c) out.set(t.p.id, fromCache(c, lang));
      else if (caller.agentId) gen.push(t);
    }
    for (const t of gen) {
      if (!quotaLeft) break;
      try {
        const c = await this.obtain(
          { subject: t.p.id, version: t.version, lang, part: "title" },
          t.sourceLang,
          caller,
          async (e) => ({
            title: await translateMarkdown(t.p.title, (x) => e.translate(x, t.sourceLang, lang)),
            body: "",
          }),
          true,
        );
        out.set(t.p.id, fromCache(c, lang));
      } catch (err) {
        if (err instanceof ApsError && err.code === "quota_exceeded") quotaLeft = false;
        else if (!(err instanceof ApsError && err.code === "unsupported_language_pair")) throw err;
      }
    }
    const items = ids.flatMap((id) => out.get(id) ?? []);
    const missing = ids.filter((id) => !out.has(id) || !byId.has(id));
    return { items, missing };
  }

  /** Markdown document `docId` (`text` in `sourceLang`) in `lang`; same cache, anonymity and quota rules. */
  async document(
    docId: string,
    text: string,
    sourceLang: Lang,
    lang: Lang,
    caller: TranslationCaller,
  ): Promise<{ text: string; engine: string | undefined; version: string; translatedAt: string | undefined }> {
    const version = versionOf(docId, text);
    if (sourceLang === lang) return { text, engine: undefined, version, translatedAt: undefined };
    const t = await this.obtain(
      { subject: `doc:${docId}`, version, lang, part: "full" },
      sourceLang,
      caller,
      async (e) => ({
        title: "",
        body: await translateMarkdown(text, (x) => e.translate(x, sourceLang, lang)),
      }),
    );
    return { text: t.body, engine: t.engine, version, translatedAt: t.translatedAt };
  }

  /** `agentId`'s quota today: `{limit, used, resetAt}` (resetAt = next UTC midnight, RFC 3339). */
  /**
   * The language pairs the running engine offers (docs/design/edge.md#index-405-and-404): `from-to` strings,
   * sorted; "every" for an engine that takes any pair; undefined without an engine or when the
   * engine cannot list them. An engine that cannot be asked now throws 503 `upstream_unavailable`.
   */
  async pairs(): Promise<string[] | "every" | undefined> {
    if (!this.engine?.pairs) return undefined;
    let p: Awaited<ReturnType<NonNullable<TranslationEngine["pairs"]>>>;
    try {
      p = await this.engine.pairs();
    } catch (err) {
      throw new ApsError("upstream_unavailable", "the translation engine cannot list its pairs now; retry later", 5, {
        cause: err,
      });
    }
    return p === "every" || p === undefined ? p : p.map(([a, b]) => `${a}-${b}`).sort();
  }

  async quota(agentId: string): Promise<{ limit: number; used: number; resetAt: string }> {
    const now = this.opts.clock.now();
    const used = await this.repo.quotaUsed(agentId, now);
    const resetAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
    return { limit: this.opts.dailyQuota, used, resetAt };
  }

  /**
   * The daily counters one generation for `caller` takes, in the order `reserveAll` locks them:
   * the deployment's, the caller's source's (when known), the caller's key's.
   */
  private countersOf(caller: TranslationCaller): QuotaCounter[] {
    return [
      { key: GLOBAL_QUOTA_KEY, limit: this.globalQuota },
      ...(caller.source ? [{ key: sourceQuotaKey(caller.source), limit: this.sourceQuota }] : []),
      { key: caller.agentId, limit: this.opts.dailyQuota },
    ];
  }

  /** `quota_exceeded` naming the budget `full` that is spent, Retry-After to the next UTC midnight. */
  private spent(full: QuotaCounter, now: Date): ApsError {
    const why =
      full.key === GLOBAL_QUOTA_KEY
        ? `this deployment's daily translation budget is used up: at most ${full.limit} new translations per UTC day for all callers together; cached translations are still served`
        : full.key.startsWith("source:")
          ? `daily translation budget of this client source used up: at most ${full.limit} new translations per UTC day for every key from this network (its /24 or /48) together`
          : `daily translation quota used up: at most ${full.limit} new translations per key per UTC day`;
    return new ApsError("quota_exceeded", why, secondsToNextUtcDay(now));
  }

  /** Cache hit, or (keyed caller) one generation shared by every concurrent identical request. */
  private async obtain(
    key: TranslationKey,
    sourceLang: Lang,
    caller: TranslationCaller,
    generate: (e: TranslationEngine) => Promise<{ title: string; body: string }>,
    counted = false,
  ): Promise<CachedTranslation> {
    if (!counted) {
      const hit = await this.repo.find(key);
      cacheLookups.inc({ result: hit ? "hit" : "miss" });
      if (hit) return hit;
    }
    if (!caller.agentId)
      throw new ApsError(
        "translation_not_cached",
        `no ${key.lang} translation of this version is cached yet; call with an API key to generate it`,
      );
    if (!this.engine) {
      engineCalls.inc({ engine: NO_ENGINE, outcome: "unavailable" });
      throw new ApsError("upstream_unavailable", "no translation engine is configured on this deployment", 3600);
    }
    const lk = leaseKey(key);
    let p = this.inflight.get(lk);
    if (!p) {
      p = this.generateOnce(key, lk, sourceLang, caller, this.engine, generate).finally(() => this.inflight.delete(lk));
      this.inflight.set(lk, p);
    }
    return p;
  }

  private async generateOnce(
    key: TranslationKey,
    lk: string,
    sourceLang: Lang,
    caller: TranslationCaller,
    engine: TranslationEngine,
    generate: (e: TranslationEngine) => Promise<{ title: string; body: string }>,
  ): Promise<CachedTranslation> {
    const holder = randomUUID();
    const leaseMs = Math.max(60_000, this.opts.timeoutMs * 3);
    const giveUp = Date.now() + leaseMs + 5_000;
    // Another replica may hold the lease: wait for its row (or for the lease to end or expire).
    while (!(await this.repo.acquireLease(lk, holder, this.opts.clock.now(), leaseMs))) {
      await sleep(100);
      const hit = await this.repo.find(key);
      if (hit) return hit;
      if (Date.now() > giveUp)
        throw new ApsError("upstream_unavailable", "the translation is still being generated; retry later", 5);
    }
    try {
      const again = await this.repo.find(key);
      if (again) return again;
      const now = this.opts.clock.now();
      const counters = this.countersOf(caller);
      const full = await this.repo.reserveAll(counters, now);
      if (full) throw this.spent(full, now);
      let out: { title: string; body: string };
      try {
        out = await generate(engine);
        engineCalls.inc({ engine: engine.name, outcome: "ok" });
      } catch (err) {
        await this.repo.refundAll(
          counters.map((c) => c.key),
          now,
        );
        const kind = err instanceof EngineError ? err.kind : "unavailable";
        engineCalls.inc({ engine: engine.name, outcome: kind });
        this.opts.log.warn(
          { engine: engine.name, err: (err as Error).message, subject: key.subject, lang: key.lang },
          "translation engine failed",
        );
        if (kind === "unsupported_pair")
          throw new ApsError(
            "unsupported_language_pair",
            `the ${engine.name} engine cannot translate ${sourceLang} → ${key.lang}`,
          );
        throw new ApsError(
          "upstream_unavailable",
          `the translation engine failed (${(err as Error).message}); retry later`,
          5,
        );
      }
      const row: CachedTranslation = {
        ...key,
        sourceLang,
        title: out.title,
        body: out.body,
        engine: engine.name,
        translatedAt: this.opts.clock.now().toISOString(),
      };
      await this.repo.insert(row);
      return row;
    } finally {
      await this.repo.releaseLease(lk, holder).catch(() => undefined);
    }
  }
}

function original(p: forum.Post, lang: Lang, version: string): TranslatedPost {
  return {
    id: p.id,
    lang,
    sourceLang: lang,
    title: p.title,
    body: p.body,
    engine: undefined,
    machineTranslation: false,
    version,
    translatedAt: undefined,
  };
}

function fromCache(c: CachedTranslation, lang: Lang): TranslatedPost {
  return {
    id: c.subject,
    lang,
    sourceLang: c.sourceLang as Lang,
    title: c.title,
    body: c.body,
    engine: c.engine,
    machineTranslation: true,
    version: c.version,
    translatedAt: c.translatedAt,
  };
}
