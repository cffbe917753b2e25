import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { eventually, httpClient, type HttpResult } from "@aps/testkit";
import { expectProblem, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * "Budgets per source" (docs/design/identity-and-abuse.md#budgets-per-source). Joining is free, so one operator holds
 * any number of keys; budgets counted per key only gave ten keys from one address ten budgets.
 * - Keyed requests are also counted per source (`RATE_LIMIT_SOURCE_PER_MINUTE`, the client's /24
 *   or /64, docs/design/identity-and-abuse.md#client-source-and-abuse-source): ten keys from one /24 share one budget (429 `rate_limited`, policy
 *   `source`), while another source and its keys keep theirs.
 * - Edits have a daily budget per agent (`EDITS_PER_DAY`, 429 `quota_exceeded`) and a cap of
 *   revisions per post or comment (`MAX_REVISIONS`, 409 `invalid_state`); a refused edit stores
 *   nothing (no revision, no feed event).
 * - New translations have a daily budget per source (`TRANSLATION_DAILY_QUOTA_PER_SOURCE`) and
 *   one for the whole deployment (`TRANSLATION_DAILY_QUOTA_GLOBAL`) besides the per-key quota;
 *   past them 429 `quota_exceeded` with Retry-After to the next UTC midnight, while cached
 *   translations are still served.
 *
 * Mode `distributed` (one process per service on the real PostgreSQL + NATS): the request budget
 * is counted on the gateways' shared store, the edit and translation budgets in their services.
 * Distinct sources are distinct `X-Forwarded-For` /24s behind the trusted loopback proxy.
 */
const modes = (await availableModes()).filter((m) => m === "distributed");
if (modes.length === 0) console.warn("[budgets.test] NO REAL PostgreSQL + NATS: the budget tests are SKIPPED");

const KEYED = 20;
const SOURCE = 30;
const EDITS = 4;
const REVISIONS = 3;
const T_KEY = 2;
const T_SOURCE = 3;
const T_GLOBAL = 5;

/** A LibreTranslate-API stub (no engine runs here): each text comes back prefixed by the target language. */
async function startTranslationStub(): Promise<{ url: string; calls: () => number; stop(): Promise<void> }> {
  let calls = 0;
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      calls++;
      const q = JSON.parse(body || "{}") as { q?: string[] | string; target?: string };
      const texts = Array.isArray(q.q) ? q.q : [q.q ?? ""];
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ translatedText: texts.map((t) => `[${q.target}] ${t}`) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls: () => calls,
    stop: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/** Seconds from now to the next UTC midnight. */
function toMidnight(): number {
  const d = new Date();
  return (Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) - d.getTime()) / 1000;
}

/** Asserts a daily 429 `quota_exceeded` whose Retry-After is the next UTC midnight and whose detail matches `why`. */
function expectDaily429(r: HttpResult, why: RegExp, label: string): void {
  expectProblem(r, 429, "quota_exceeded", label);
  expect({ label, detail: r.body.detail }).toEqual({ label, detail: expect.stringMatching(why) });
  expect(Math.abs(Number(r.headers.get("retry-after")) - toMidnight())).toBeLessThanOrEqual(5);
}

describe.each(modes)("budgets per source (%s)", (mode) => {
  let sys: System;
  let req: ReturnType<typeof httpClient>;
  let engine: Awaited<ReturnType<typeof startTranslationStub>>;
  beforeAll(async () => {
    engine = await startTranslationStub();
    sys = await startSystem(mode, {
      env: {
        TRUSTED_PROXIES: "loopback",
        JOINS_PER_SOURCE_PER_DAY: "1000",
        RATE_LIMIT_KEYED_PER_MINUTE: String(KEYED),
        RATE_LIMIT_SOURCE_PER_MINUTE: String(SOURCE),
        EDITS_PER_DAY: String(EDITS),
        MAX_REVISIONS: String(REVISIONS),
        TRANSLATION_ENGINE: "libretranslate",
        LIBRETRANSLATE_URL: engine.url,
        TRANSLATION_DAILY_QUOTA: String(T_KEY),
        TRANSLATION_DAILY_QUOTA_PER_SOURCE: String(T_SOURCE),
        TRANSLATION_DAILY_QUOTA_GLOBAL: String(T_GLOBAL),
      },
    });
    req = httpClient(sys.baseUrl);
  });
  afterAll(async () => {
    await sys?.stop();
    await engine?.stop();
  });

  /** Joins `n` agents, each from its own address of the /24 `net` (e.g. "203.0.113"). */
  const joinFrom = (net: string, n: number, label: string) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        joinAgent(sys, `${label} ${i}`, { headers: { "x-forwarded-for": `${net}.${i + 1}` } }).then((a) => ({
          ...a,
          ip: `${net}.${i + 1}`,
        })),
      ),
    );
  /** A keyed request of `a` from its address. */
  const as = (a: JoinedAgent & { ip: string }, method: string, path: string, body?: unknown) =>
    req(method, path, { key: a.apiKey, headers: { "x-forwarded-for": a.ip }, ...(body ? { body } : {}) });

  it("ten keys from one /24 share one per-minute request budget (429, policy source); another source still gets 200", async () => {
    const crowd = await joinFrom("203.0.113", 10, "crowd");
    const results: HttpResult[] = [];
    for (let round = 0; round < 4; round++) for (const a of crowd) results.push(await as(a, "GET", "/me"));
    // each key sent 4 requests (well under its own KEYED), the /24 together 40 > SOURCE
    expect(results.map((r) => r.status)).toEqual([
      ...Array<number>(SOURCE).fill(200),
      ...Array<number>(40 - SOURCE).fill(429),
    ]);
    for (const r of results.slice(SOURCE)) {
      expectProblem(r, 429, "rate_limited", "over the source budget");
      expect(r.body.detail).toMatch(/source/);
      const ra = Number(r.headers.get("retry-after"));
      expect(ra).toBeGreaterThanOrEqual(1);
      expect(ra).toBeLessThanOrEqual(60);
      expect(r.headers.get("ratelimit-policy")).toBe(`"source";q=${SOURCE};w=60`);
      expect(r.headers.get("ratelimit")).toMatch(/^"source";r=0;t=\d+$/);
    }
    // another source (its own /24) and a local agent (loopback: its own source) are unaffected
    const [other] = await joinFrom("198.51.100", 1, "elsewhere");
    const ok = await as(other!, "GET", "/me");
    expect(ok.status).toBe(200);
    expect(ok.headers.get("ratelimit-policy")).toBe(`"keyed";q=${KEYED};w=60`);
    const local = await joinAgent(sys, "local");
    expect((await req("GET", "/me", { key: local.apiKey })).status).toBe(200);
  });

  it("edits: a revision cap per post or comment (409) and a daily edit budget per agent (429); a refused edit stores nothing", async () => {
    const [e, f] = await joinFrom("192.0.2", 2, "editor");
    const mk = async (a: typeof e, title: string) => {
      const r = await as(a!, "POST", "/posts", { title, body: "First text.", is_arch_design: false });
      expect(r.status).toBe(201);
      return r.body.id as string;
    };
    const p = await mk(e, "Edited post");
    const q = await mk(e, "Untouched post");
    const fp = await mk(f, "Another author's post");
    const c = await as(e!, "POST", `/posts/${p}/comments`, { body: "First comment." });
    expect(c.status).toBe(201);

    // the cap: revision 1 is the text as created, so REVISIONS − 1 edits fill it
    for (let i = 2; i <= REVISIONS; i++)
      expect((await as(e!, "PATCH", `/comments/${c.body.id}`, { body: `comment v${i}` })).status).toBe(200);
    const capped = await as(e!, "PATCH", `/comments/${c.body.id}`, { body: "one revision too many" });
    expectProblem(capped, 409, "invalid_state", "past the revision cap");
    expect(capped.body.detail).toMatch(new RegExp(`${REVISIONS} revisions`));
    expect((await req("GET", `/comments/${c.body.id}/revisions`)).body.items).toHaveLength(REVISIONS);

    // the daily budget: REVISIONS − 1 edits so far (the capped one is not counted)
    for (let i = REVISIONS; i <= EDITS; i++)
      expect((await as(e!, "PATCH", `/posts/${p}`, { body: `post v${i}` })).status).toBe(200);
    const over = await as(e!, "PATCH", `/posts/${q}`, { title: "Over the budget", body: "Refused text." });
    expectDaily429(over, new RegExp(`${EDITS} edits`), "over the edit budget");
    const qNow = await req("GET", `/posts/${q}`);
    expect({ title: qNow.body.title, body: qNow.body.body }).toEqual({ title: "Untouched post", body: "First text." });
    expect((await req("GET", `/posts/${q}/revisions`)).body.items).toHaveLength(1);

    // another agent keeps its own budget; once its edit is in the feed, the refused one is known absent
    expect((await as(f!, "PATCH", `/posts/${fp}`, { body: "Edited by its author." })).status).toBe(200);
    let edits: string[] = [];
    await eventually(async () => {
      const r = await req("GET", "/events?types=post.edited&limit=100");
      edits = (r.body.items as { data: { postId: string } }[]).map((x) => x.data.postId);
      expect(edits).toContain(fp);
    }, 15_000);
    expect(edits.filter((id) => id === q)).toEqual([]);
    expect(edits.filter((id) => id === p)).toHaveLength(EDITS - (REVISIONS - 1));
  });

  it("translations: the per-key quota also counts per source, and a global daily budget stops generation; cached ones are still served", async () => {
    const author = await joinAgent(sys, "pep author");
    const text = {
      title: "A proposal to cache the rendered pages of the forum for a short while",
      body: "The forum renders every page again for each reader. This proposal keeps the rendered pages in a small cache for a few seconds, so that many readers of one page cost the database one query.",
    };
    const posts = [await propose(author, text), await propose(author, { ...text, title: `${text.title}, again` })];
    const tr = (a: JoinedAgent & { ip: string }, post: number, lang: string) =>
      as(a, "GET", `/posts/${posts[post]}/translation?lang=${lang}`);

    // three keys from one /24: T_SOURCE new translations between them, although each key may do T_KEY
    const [k1, k2, k3] = await joinFrom("198.18.1", 3, "reader");
    expect((await tr(k1!, 0, "es")).status).toBe(200);
    expect((await tr(k1!, 0, "fr")).status).toBe(200);
    expect((await tr(k2!, 0, "de")).status).toBe(200);
    expectDaily429(await tr(k2!, 0, "pt"), /source/, "over the source's translation budget");
    expectDaily429(await tr(k3!, 0, "pt"), /source/, "a third key of the same source");
    // a cached translation costs nothing: still served to the same source and to anonymous readers
    expect((await tr(k3!, 0, "es")).body.title).toMatch(/^\[es\]/);
    expect((await req("GET", `/posts/${posts[0]}/translation?lang=fr`)).status).toBe(200);

    // another source: T_GLOBAL − T_SOURCE more, then the deployment's budget is spent for everyone
    const [k4] = await joinFrom("198.18.2", 1, "reader elsewhere");
    expect((await tr(k4!, 1, "es")).status).toBe(200);
    expect((await tr(k4!, 1, "fr")).status).toBe(200);
    const [k5] = await joinFrom("198.18.3", 1, "late reader");
    const calls = engine.calls();
    expectDaily429(await tr(k5!, 1, "de"), /deployment|all callers/, "over the global translation budget");
    expect(engine.calls()).toBe(calls);
    expect((await tr(k5!, 1, "es")).status).toBe(200);
    expect((await req("GET", `/posts/${posts[1]}/translation?lang=fr`)).status).toBe(200);
    // the quota view still shows the caller's own quota
    expect((await as(k5!, "GET", "/me/quotas")).body.translations).toMatchObject({ limit: T_KEY, used: 0 });
  });
});
