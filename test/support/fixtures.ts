/**
 * The domain fixtures of the cross-service suites under test/ (docs/design/tests.md#domain-fixtures): one way to make an
 * agent, seat it, put up a proposal, and assert an answer's status, so no test file carries its
 * own copy (test/ops/fixtures.test.ts keeps it so). They call the API through its typed client,
 * `@aps/client` (docs/design/agents.md#typed-client), so every request and answer is typed by the OpenAPI document and
 * passes the contract check (docs/design/edge.md#contract-checks) like any other request of the suite.
 *
 * Every fixture asserts the status it needs and throws an `Error` naming the request, the status
 * it got and the problem's code and detail otherwise: a failing setup says what failed, not
 * "expected 201, received 429" at a line of a helper. A test that checks a request's raw HTTP
 * (status, headers, body bytes) on purpose keeps its own raw request; these are for the setup
 * around what a test checks.
 */
import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createApsClient, type ApsClient, type Schemas } from "@aps/client";
import { registerApsOrigin, waitUntil, type HttpResult } from "@aps/testkit";

/** Where an APS API is: its `/v1` base URL, or anything that carries one (a `System`, an all-in-one). */
export type ApiTarget = string | { readonly baseUrl: string };

/** An API and the platform owner's token (`APS_ADMIN_TOKEN`): a `System` is one. */
export interface OwnerTarget {
  readonly baseUrl: string;
  readonly adminToken: string;
}

/** A Council seat. */
export type Seat = "councillor" | "chief";

/** An agent made by {@link joinAgent}. */
export interface JoinedAgent {
  /** `ext_…` */
  agentId: string;
  /** The agent's API key (`sk_src_…`), shown once by `POST /v1/join`. */
  apiKey: string;
  /** The name it joined with. */
  name: string;
  /** A typed client of the same API authenticated with `apiKey`. */
  client: ApsClient;
}

/** Options of {@link joinAgent}. */
export interface JoinOptions {
  /** The agent's `url` field. */
  url?: string;
  /** Sent as `Idempotency-Key`: a retry with the same key is the same agent with a fresh key. */
  idempotencyKey?: string;
  /** More request headers, e.g. `{ "x-forwarded-for": ip }` to join from another source. */
  headers?: Record<string, string>;
  /**
   * Send the join again, with the same `Idempotency-Key` (a random one unless given), while the
   * answer is 503 `upstream_unavailable` — the gateway's call to identity past its deadline on a
   * loaded machine — as docs/reference/endpoints.md tells an agent to, until this many ms
   * (stretched by TEST_TIME_SCALE) have passed: the same identity, never a second one. Any other
   * answer but 201 still fails at once. `onResend` counts the joins sent again.
   */
  resendWhileUnavailable?: { timeoutMs: number; onResend?: () => void };
  /** Join the sandbox instead (`POST /v1/sandbox/join`, docs/design/agents.md#sandbox): the key is an `sk_test_` one. */
  sandbox?: boolean;
}

/** The fields of a proposal made by {@link propose}; each has a default. */
export interface ProposalFields {
  /** Default "A proposal". */
  title?: string;
  /** Markdown; default "Details.". */
  body?: string;
  /** `is_arch_design`: true (default) for an architecture proposal, false for free talk. */
  arch?: boolean;
  /** 0–5 tags. */
  tags?: string[];
}

/** The `/v1` base URL of `api`. */
export function baseUrlOf(api: ApiTarget): string {
  return typeof api === "string" ? api : api.baseUrl;
}

/**
 * A typed client of `api`, with `token` (an agent's key or the owner's token) as its bearer. The
 * origin is registered with the contract check, as `httpClient` does.
 */
export function apiClient(api: ApiTarget, token?: string): ApsClient {
  const baseUrl = baseUrlOf(api);
  registerApsOrigin(baseUrl);
  return createApsClient({ baseUrl, ...(token ? { token } : {}) });
}

/** Throws unless `response` has `status`: the message names `what`, the status and the problem. */
function expectAnswer(what: string, response: Response, error: unknown, status: number): void {
  if (response.status === status) return;
  const problem = error && typeof error === "object" ? (error as Partial<Schemas["Problem"]>) : undefined;
  const why = problem?.code ? ` ${problem.code}${problem.detail ? `: ${problem.detail}` : ""}` : "";
  throw new Error(`${what}: expected HTTP ${status}, got ${response.status}${why}`);
}

/**
 * Joins one agent: `POST /v1/join` with `{ name, url? }` (and `opts.idempotencyKey`,
 * `opts.headers`).
 * @returns its id, key and name, and a typed client authenticated as it.
 * @throws Error unless the answer is 201 (e.g. 429 when the source's daily joins are spent).
 */
export async function joinAgent(api: ApiTarget, name: string, opts: JoinOptions = {}): Promise<JoinedAgent> {
  const resend = opts.resendWhileUnavailable;
  const idempotencyKey = opts.idempotencyKey ?? (resend ? randomUUID() : undefined);
  const join = () =>
    apiClient(api).POST(opts.sandbox ? "/v1/sandbox/join" : "/v1/join", {
      body: { name, ...(opts.url !== undefined ? { url: opts.url } : {}) },
      params: { header: idempotencyKey !== undefined ? { "Idempotency-Key": idempotencyKey } : {} },
      ...(opts.headers ? { headers: opts.headers } : {}),
    });
  const unavailable = (a: Awaited<ReturnType<typeof join>>) =>
    a.response.status === 503 && (a.error as Partial<Schemas["Problem"]> | undefined)?.code === "upstream_unavailable";
  let answer = await join();
  if (resend && unavailable(answer)) {
    answer = await waitUntil(
      `the join of ${JSON.stringify(name)} past its 503s`,
      async () => {
        resend.onResend?.();
        const a = await join();
        return unavailable(a) ? undefined : a;
      },
      { timeoutMs: resend.timeoutMs, intervalMs: 250 },
    );
  }
  const { data, error, response } = answer;
  expectAnswer(
    `joinAgent(${JSON.stringify(name)}): POST ${opts.sandbox ? "/v1/sandbox/join" : "/v1/join"}`,
    response,
    error,
    201,
  );
  const { agentId, apiKey } = data!;
  return { agentId, apiKey, name, client: apiClient(api, apiKey) };
}

/**
 * Joins `n` agents at once (in parallel), named `<label> agent 0` … `<label> agent <n-1>`.
 * @returns them in the order of their names.
 * @throws Error unless every join is answered 201.
 */
export function joinAgents(api: ApiTarget, n: number, label: string): Promise<JoinedAgent[]> {
  return Promise.all(Array.from({ length: n }, (_, i) => joinAgent(api, `${label} agent ${i}`)));
}

/**
 * Grants `seat` to an agent: `POST /v1/admin/seats` with the owner's token.
 * @returns the agent as the owner route answers it (its `seats` include `seat`).
 * @throws Error unless the answer is 200 (404 for an unknown agent, 401 for a wrong token).
 */
export async function grantSeat(
  owner: OwnerTarget,
  agent: string | { readonly agentId: string },
  seat: Seat,
): Promise<Schemas["Agent"]> {
  const agentId = typeof agent === "string" ? agent : agent.agentId;
  const { data, error, response } = await apiClient(owner, owner.adminToken).POST("/v1/admin/seats", {
    body: { agentId, seat },
  });
  expectAnswer(`grantSeat(${agentId}, ${seat}): POST /v1/admin/seats`, response, error, 200);
  return data!;
}

/**
 * Grants `seat` to a sandbox agent as another sandbox agent (`by`, or the agent itself): `POST /v1/test/seats`
 * with `by`'s `sk_test_` key (docs/design/agents.md#sandbox).
 * @returns the agent with its seats.
 * @throws Error unless the answer is 200.
 */
export async function grantTestSeat(
  by: Pick<JoinedAgent, "client">,
  agent: { readonly agentId: string },
  seat: Seat,
): Promise<Schemas["Agent"]> {
  const { data, error, response } = await by.client.POST("/v1/test/seats", { body: { agentId: agent.agentId, seat } });
  expectAnswer(`grantTestSeat(${agent.agentId}, ${seat}): POST /v1/test/seats`, response, error, 200);
  return data!;
}

/**
 * Takes `seat` from an agent: `DELETE /v1/admin/seats/{agentId}/{seat}` with the owner's token.
 * @returns the agent as the owner route answers it.
 * @throws Error unless the answer is 200.
 */
export async function revokeSeat(
  owner: OwnerTarget,
  agent: string | { readonly agentId: string },
  seat: Seat,
): Promise<Schemas["Agent"]> {
  const agentId = typeof agent === "string" ? agent : agent.agentId;
  const { data, error, response } = await apiClient(owner, owner.adminToken).DELETE(
    "/v1/admin/seats/{agentId}/{seat}",
    { params: { path: { agentId, seat } } },
  );
  expectAnswer(`revokeSeat(${agentId}, ${seat}): DELETE /v1/admin/seats/{agentId}/{seat}`, response, error, 200);
  return data!;
}

/**
 * Seats a Council: the first of `members` as chief, every other one as councillor, in order.
 * @throws Error unless every grant is answered 200.
 */
export async function seatCouncil(owner: OwnerTarget, members: readonly { readonly agentId: string }[]): Promise<void> {
  for (const [i, a] of members.entries()) await grantSeat(owner, a, i === 0 ? "chief" : "councillor");
}

/**
 * Puts up a proposal by `author`: `POST /v1/posts` with `{ title, body, is_arch_design, tags? }`
 * (defaults: "A proposal", "Details.", an architecture proposal, no tags).
 * @returns the new post's id (`p_…`).
 * @throws Error unless the answer is 201 (e.g. 429 when the author's daily posts are spent).
 */
export async function propose(author: Pick<JoinedAgent, "client">, fields: ProposalFields = {}): Promise<string> {
  const { title = "A proposal", body = "Details.", arch = true, tags } = fields;
  const { data, error, response } = await author.client.POST("/v1/posts", {
    body: { title, body, is_arch_design: arch, ...(tags ? { tags } : {}) },
  });
  expectAnswer(`propose(${JSON.stringify(title)}): POST /v1/posts`, response, error, 201);
  return data!.id;
}

/**
 * The body of a raw answer (`httpClient`'s) when its status is `status`.
 * @throws Error naming `what`, the status it got and the first 300 characters of the answer.
 */
export function expectStatus<T>(r: HttpResult<T>, status: number, what: string): T {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${r.text.slice(0, 300)}`);
  return r.body;
}

/**
 * Asserts that a raw answer is a problem document (RFC 9457, `application/problem+json`) with
 * `status` and `code`. `label` names the request in the failure (one object is compared, so a
 * failure shows which request answered what).
 */
export function expectProblem(r: HttpResult, status: number, code: string, label = ""): void {
  expect({ label, status: r.status, code: r.body?.code }).toEqual({ label, status, code });
  expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
}

/**
 * Runs `use` with an MCP client connected to `api`'s `/mcp` over Streamable HTTP, `apiKey` as its
 * bearer (docs/design/agents.md#mcp-tools), and closes it after, whatever `use` did: how a topic's
 * own e2e test calls its tool or action beside its HTTP requests.
 * @returns what `use` returns.
 */
export async function withMcp<T>(api: ApiTarget, apiKey: string, use: (mcp: Client) => Promise<T>): Promise<T> {
  const mcp = new Client({ name: "aps-e2e", version: "1.0.0" });
  await mcp.connect(
    new StreamableHTTPClientTransport(new URL(`${new URL(baseUrlOf(api)).origin}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
    }),
  );
  try {
    return await use(mcp);
  } finally {
    await mcp.close();
  }
}
