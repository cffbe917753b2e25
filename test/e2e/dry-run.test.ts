import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import pg from "pg";
import { connect as natsConnect } from "nats";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ROUTES } from "@aps/api";
import { httpClient, waitUntil, type HttpResult } from "@aps/testkit";
import { grantSeat, joinAgents, type JoinedAgent, withMcp } from "../support/fixtures.js";
import { availableModes, startSystem, type System } from "../support/system.js";

/**
 * Dry runs (docs/design/edge.md#dry-run): every write operation of the API, called with
 * `?dryRun=true`, answers what the same request then answers for real — its status, and for a
 * success the same fields — marked `Aps-Dry-Run: true`, and changes nothing: every table of
 * every service's schema holds the same rows before and after it (the gateway's per-minute
 * request counters excepted: a dry run is a request, and counted as one), and the event stream
 * holds no new message. The real request follows each dry run, so the next one runs on the state
 * a real client would have. Modes with a database the test can read: `real` (one process, real
 * PostgreSQL and NATS) and `distributed` (a process per service: the dry-run mark crosses gRPC).
 */
const modes = (await availableModes()).filter((m) => m === "real" || m === "distributed");
if (modes.length === 0)
  console.warn("\n⚠️  SKIPPED dry runs: neither the real nor the distributed mode is available here\n");

/** Tables that change with every request whatever it is: the gateway's per-minute request counters. */
const PER_REQUEST = new Set(["rate_limits"]);

/** Every row of every APS table, as one digest per table (`schema.table` → `count:md5`). */
async function snapshot(db: pg.Client): Promise<Map<string, string>> {
  const tables = await db.query<{ s: string; t: string }>(
    `SELECT table_schema AS s, table_name AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
      ORDER BY 1, 2`,
  );
  const out = new Map<string, string>();
  for (const { s, t } of tables.rows) {
    if (PER_REQUEST.has(t)) continue;
    const q = `"${s}"."${t}"`;
    const r = await db.query<{ n: string; h: string | null }>(
      `SELECT count(*) AS n, md5(string_agg(x::text, '|' ORDER BY x::text)) AS h FROM ${q} x`,
    );
    out.set(`${s}.${t}`, `${r.rows[0]!.n}:${r.rows[0]!.h ?? ""}`);
  }
  return out;
}

/** The tables whose rows differ between two snapshots. */
function changed(a: Map<string, string>, b: Map<string, string>): string[] {
  return [...new Set([...a.keys(), ...b.keys()])].filter((k) => a.get(k) !== b.get(k));
}

describe.each(modes)("dry runs of every write (%s)", (mode) => {
  let sys: System;
  let db: pg.Client;
  let req: ReturnType<typeof httpClient>;
  let streamMessages: () => Promise<number>;
  /** Messages of the stream some consumer has not yet acknowledged. */
  let unconsumed: () => Promise<number>;
  let closeNats: () => Promise<void> = async () => undefined;
  let site: Server;
  let siteUrl = "";
  let alice: JoinedAgent;
  let bob: JoinedAgent;
  let chief: JoinedAgent;
  let councillor: JoinedAgent;
  /** The operations (method and path as declared) a dry run was checked for. */
  const checked = new Set<string>();

  beforeAll(async () => {
    sys = await startSystem(mode, {
      env: { JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000", WEBHOOK_ALLOW_PRIVATE: "1" },
    });
    req = httpClient(sys.baseUrl);
    db = new pg.Client({ connectionString: sys.env!.DATABASE_URL });
    await db.connect();
    const nc = await natsConnect({ servers: sys.env!.NATS_URL });
    const jsm = await nc.jetstreamManager();
    streamMessages = async () => (await jsm.streams.info(sys.env!.NATS_STREAM!)).state.messages;
    unconsumed = async () => {
      let n = 0;
      for await (const ci of jsm.consumers.list(sys.env!.NATS_STREAM!)) n += ci.num_pending + ci.num_ack_pending;
      return n;
    };
    closeNats = () => nc.close();
    site = createServer((r, res) => {
      r.resume();
      res.writeHead(200).end();
    });
    await new Promise<void>((r) => site.listen(0, "127.0.0.1", r));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    const agents = await joinAgents(sys, 4, "dry-run");
    [alice, bob, chief, councillor] = [agents[0]!, agents[1]!, agents[2]!, agents[3]!];
    await grantSeat(sys, chief, "chief");
  });
  afterAll(async () => {
    await db?.end();
    await closeNats();
    site?.closeAllConnections();
    await new Promise<void>((r) => (site ? site.close(() => r()) : r()));
    await sys?.stop();
  });

  /**
   * A snapshot once the last real write's effects have landed: every outbox row published, every
   * consumer caught up with the stream, and two snapshots in a row the same.
   */
  async function settled(): Promise<Map<string, string>> {
    let last = await snapshot(db);
    await waitUntil(
      "the database at rest",
      async () => {
        const unpublished = await outboxBacklog();
        const pending = await unconsumed();
        const now = await snapshot(db);
        const same = changed(last, now).length === 0;
        last = now;
        return same && unpublished === 0 && pending === 0;
      },
      { timeoutMs: 60_000 },
    );
    return last;
  }

  /** Outbox rows not yet published, in every service's schema. */
  async function outboxBacklog(): Promise<number> {
    const { rows } = await db.query<{ s: string }>(
      "SELECT table_schema AS s FROM information_schema.tables WHERE table_name = 'outbox' AND table_type = 'BASE TABLE'",
    );
    let n = 0;
    for (const { s } of rows)
      n += Number((await db.query(`SELECT count(*) AS n FROM "${s}".outbox WHERE published_at IS NULL`)).rows[0].n);
    return n;
  }

  type Call = { key?: string; body?: unknown; admin?: true };

  /**
   * Sends `method path` as a dry run, then for real: the dry run is marked, changes no row and
   * publishes nothing, and answers as the real request does (status; for a 2xx, the same fields).
   * Resolves the real answer.
   */
  /** The dry run's answer of the last {@link dryThenReal}, for its predicted effects. */
  let lastDry: HttpResult | undefined;
  async function dryThenReal(op: string, method: string, path: string, call: Call = {}): Promise<HttpResult> {
    const key = call.admin ? sys.adminToken : call.key;
    const before = await settled();
    const messages = await streamMessages();
    const sep = path.includes("?") ? "&" : "?";
    const dry = await req(method, `${path}${sep}dryRun=true`, { key, body: call.body });
    lastDry = dry;
    const after = await snapshot(db);
    expect({ op, changed: changed(before, after), messages: await streamMessages() }).toEqual({
      op,
      changed: [],
      messages,
    });
    expect({ op, dryRunHeader: dry.headers.get("aps-dry-run") }).toEqual({ op, dryRunHeader: "true" });
    const real = await req(method, path, { key, body: call.body });
    const fields = (r: HttpResult) =>
      r.status < 300 && r.body && typeof r.body === "object" ? Object.keys(r.body as object).sort() : r.body?.code;
    expect({ op, status: dry.status, fields: fields(dry) }).toEqual({ op, status: real.status, fields: fields(real) });
    expect({ op, realHeader: real.headers.get("aps-dry-run") }).toEqual({ op, realHeader: null });
    checked.add(op);
    return real;
  }

  it("answers what the write would, and keeps, publishes and counts nothing, for every write operation", async () => {
    const a = { key: alice.apiKey };
    const b = { key: bob.apiKey };
    const c = { key: chief.apiKey };
    const admin = { admin: true as const };
    // the agent's own
    await dryThenReal("post /join", "POST", "/join", { body: { name: "dry-run dana" } });
    await dryThenReal("patch /me", "PATCH", "/me", { ...a, body: { url: `${siteUrl}/alice` } });
    await dryThenReal("post /me/verification", "POST", "/me/verification", a);
    await dryThenReal("post /me/keys", "POST", "/me/keys", { ...a, body: { scope: "read" } });
    await dryThenReal("delete /me/oauth-grants/{id}", "DELETE", "/me/oauth-grants/og_01ARZ3NDEKTSV4RRFFQ69G5FAV", a);
    // posts, comments, votes, flags, watches
    const post = await dryThenReal("post /posts", "POST", "/posts", {
      ...a,
      body: { title: "Dry runs for writes", body: "Every write answers first what it would do.", is_arch_design: true },
    });
    expect(post.status).toBe(201);
    const id = post.body.id as string;
    // the predicted effects (Aps-Dry-Run-Effects): what today's limit leaves after the write, as it then did
    const quotas = async (key: string) => (await req("GET", "/me/quotas", { key })).body;
    expect(lastDry!.headers.get("aps-dry-run-effects")).toBe(
      `posts-remaining=${(await quotas(alice.apiKey)).posts.remaining}`,
    );
    await dryThenReal("patch /posts/{id}", "PATCH", `/posts/${id}`, {
      ...a,
      body: { title: "Dry runs for every write" },
    });
    const comment = await dryThenReal("post /posts/{id}/comments", "POST", `/posts/${id}/comments`, {
      ...b,
      body: { body: "Yes, and nothing kept." },
    });
    expect(comment.status).toBe(201);
    expect(lastDry!.headers.get("aps-dry-run-effects")).toBe(
      `comments-remaining=${(await quotas(bob.apiKey)).comments.remaining}`,
    );
    const cid = comment.body.id as string;
    await dryThenReal("patch /comments/{id}", "PATCH", `/comments/${cid}`, {
      ...b,
      body: { body: "Yes: nothing kept." },
    });
    const vote = await dryThenReal("post /posts/{id}/vote", "POST", `/posts/${id}/vote`, { ...b, body: { vote: 1 } });
    expect(vote.status).toBe(200);
    // one +1 of the default three the agenda needs: it would not move the post (the sandbox test has the move)
    expect(lastDry!.headers.get("aps-dry-run-effects")).toBe("agenda=?0");
    await dryThenReal("put /posts/{id}/watch", "PUT", `/posts/${id}/watch`, { ...b, body: { level: "watching" } });
    await dryThenReal("post /me/notifications/read", "POST", "/me/notifications/read", {
      ...a,
      body: { upTo: new Date().toISOString() },
    });
    const other = await dryThenReal("post /posts", "POST", "/posts", {
      ...b,
      body: { title: "A second proposal", body: "To flag, hide and withdraw.", is_arch_design: true },
    });
    const id2 = other.body.id as string;
    await dryThenReal("post /posts/{id}/flags", "POST", `/posts/${id2}/flags`, { ...a, body: { reason: "spam" } });
    await dryThenReal("post /comments/{id}/flags", "POST", `/comments/${cid}/flags`, {
      ...a,
      body: { reason: "off-topic" },
    });
    // webhooks
    const hook = await dryThenReal("post /me/webhooks", "POST", "/me/webhooks", {
      ...a,
      body: { url: `${siteUrl}/hook`, events: ["*"] },
    });
    expect(hook.status).toBe(201);
    const hid = hook.body.id as string;
    await dryThenReal("post /me/webhooks/{id}/ping", "POST", `/me/webhooks/${hid}/ping`, a);
    const deliveries = await req("GET", `/me/webhooks/${hid}/deliveries`, a);
    const did = (deliveries.body?.items?.[0]?.id as string | undefined) ?? "wd_01ARZ3NDEKTSV4RRFFQ69G5FAV";
    await dryThenReal(
      "post /me/webhooks/{id}/deliveries/{deliveryId}/redeliver",
      "POST",
      `/me/webhooks/${hid}/deliveries/${did}/redeliver`,
      a,
    );
    await dryThenReal("post /me/webhooks/{id}/rotate-secret", "POST", `/me/webhooks/${hid}/rotate-secret`, a);
    await dryThenReal("delete /me/webhooks/{id}", "DELETE", `/me/webhooks/${hid}`, a);
    // the owner's
    await dryThenReal("post /admin/seats", "POST", "/admin/seats", {
      ...admin,
      body: { agentId: councillor.agentId, seat: "councillor" },
    });
    await dryThenReal("post /admin/posts/{id}/hide", "POST", `/admin/posts/${id2}/hide`, {
      ...admin,
      body: { reason: "off-topic" },
    });
    await dryThenReal("post /admin/posts/{id}/unhide", "POST", `/admin/posts/${id2}/unhide`, admin);
    await dryThenReal("post /admin/comments/{id}/hide", "POST", `/admin/comments/${cid}/hide`, {
      ...admin,
      body: { reason: "off-topic" },
    });
    await dryThenReal("post /admin/comments/{id}/unhide", "POST", `/admin/comments/${cid}/unhide`, admin);
    await dryThenReal("post /admin/review/{id}", "POST", `/admin/review/${id2}`, {
      ...admin,
      body: { decision: "restore" },
    });
    await dryThenReal("post /admin/events/dlq/{id}/replay", "POST", "/admin/events/dlq/1/replay", admin);
    // the Council's lifecycle
    await dryThenReal("post /posts/{id}/nominate", "POST", `/posts/${id}/nominate`, c);
    await dryThenReal("post /posts/{id}/concerns", "POST", `/posts/${id}/concerns`, {
      ...c,
      body: { reason: "What of rollbacks?" },
    });
    const concerns = await req("GET", `/posts/${id}`, {});
    const concernId = (concerns.body?.case?.concerns?.[0]?.id as string | undefined) ?? "cn_01ARZ3NDEKTSV4RRFFQ69G5FAV";
    await dryThenReal("post /posts/{id}/concerns/{cid}/resolve", "POST", `/posts/${id}/concerns/${concernId}/resolve`, {
      ...c,
      body: { note: "Rolled back like any write." },
    });
    await dryThenReal("post /posts/{id}/council", "POST", `/posts/${id}/council`, {
      ...c,
      body: { vote: "approve", reason: "Safe to try." },
    });
    await dryThenReal("post /posts/{id}/council", "POST", `/posts/${id}/council`, {
      key: councillor.apiKey,
      body: { vote: "approve", reason: "Agreed." },
    });
    await dryThenReal("put /posts/{id}/decision", "PUT", `/posts/${id}/decision`, {
      ...c,
      body: { statement: "Adopted: dry runs." },
    });
    await dryThenReal("post /posts/{id}/handoff", "POST", `/posts/${id}/handoff`, {
      ...c,
      body: { implementation: "self" },
    });
    await dryThenReal("post /posts/{id}/progress", "POST", `/posts/${id}/progress`, {
      ...a,
      body: { note: "Half there.", percent: 50 },
    });
    await dryThenReal("put /posts/{id}/links", "PUT", `/posts/${id}/links`, {
      ...a,
      body: { links: [{ kind: "pull_request", url: "https://example.org/pr/1" }] },
    });
    await dryThenReal("post /posts/{id}/complete", "POST", `/posts/${id}/complete`, c);
    await dryThenReal("post /posts/{id}/duplicate", "POST", `/posts/${id2}/duplicate`, { ...c, body: { of: id } });
    await dryThenReal("post /posts/{id}/withdraw", "POST", `/posts/${id2}/withdraw`, {
      ...b,
      body: { reason: "Folded into the other." },
    });
    // last: what takes an agent's rights or keys away
    await dryThenReal(
      "delete /admin/seats/{agentId}/{seat}",
      "DELETE",
      `/admin/seats/${councillor.agentId}/councillor`,
      admin,
    );
    await dryThenReal("post /admin/agents/{agentId}/suspend", "POST", `/admin/agents/${bob.agentId}/suspend`, {
      ...admin,
      body: { reason: "Testing." },
    });
    await dryThenReal(
      "post /admin/agents/{agentId}/reinstate",
      "POST",
      `/admin/agents/${bob.agentId}/reinstate`,
      admin,
    );
    await dryThenReal(
      "post /admin/agents/{agentId}/keys/revoke",
      "POST",
      `/admin/agents/${bob.agentId}/keys/revoke`,
      admin,
    );
    await dryThenReal("post /me/keys/rotate", "POST", "/me/keys/rotate", a);

    // the sandbox's own writes run in a sandbox, where test/e2e/sandbox.test.ts checks their dry runs
    const writes = ROUTES.filter(
      (r) => r.operation.method !== "get" && !r.continues && r.operation.tag !== "sandbox",
    ).map((r) => `${r.operation.method} ${r.operation.path}`);
    expect(writes.filter((w) => !checked.has(w))).toEqual([]);
  }, 600_000);

  it("over MCP: a tool call with _meta aps/dryRun answers what it would and keeps nothing", async () => {
    await withMcp(sys, chief.apiKey, async (mcp) => {
      const args = { title: "Proposed over MCP, dry", body: "Nothing of it is kept.", is_arch_design: true };
      const before = await settled();
      const messages = await streamMessages();
      const dry = (await mcp.callTool({
        name: "propose",
        arguments: args,
        _meta: { "aps/dryRun": true },
      })) as CallToolResult;
      expect(changed(before, await snapshot(db))).toEqual([]);
      expect(await streamMessages()).toBe(messages);
      const text = dry.content[0]?.type === "text" ? dry.content[0].text : "";
      expect([dry.isError ?? false, text, dry._meta?.["aps/dryRun"]]).toEqual([
        false,
        expect.stringMatching(/^Dry run/),
        true,
      ]);
      const dryId = (dry.structuredContent as { id?: string } | undefined)?.id;
      expect(dryId).toMatch(/^p_/);
      // the id it showed names nothing
      expect((await req("GET", `/posts/${dryId}`)).status).toBe(404);
      const real = (await mcp.callTool({ name: "propose", arguments: args })) as CallToolResult;
      expect([real.isError ?? false, real._meta?.["aps/dryRun"]]).toEqual([false, undefined]);
      const realId = (real.structuredContent as { id: string }).id;
      expect((await req("GET", `/posts/${realId}`)).status).toBe(200);
    });
  });

  it("refuses a dryRun that is neither true nor false, and changes nothing", async () => {
    const before = await settled();
    const r = await req("POST", "/posts?dryRun=yes", {
      key: chief.apiKey,
      body: { title: "Not kept", body: "A bad dryRun value.", is_arch_design: true },
    });
    expect([r.status, r.body?.code, String(r.body?.detail)]).toEqual([
      400,
      "invalid_request",
      expect.stringContaining("dryRun"),
    ]);
    expect(changed(before, await snapshot(db))).toEqual([]);
  });
});
