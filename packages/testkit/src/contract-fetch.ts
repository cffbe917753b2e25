import { ContractValidator, type ContractViolation, type RequestViolation } from "./contract.js";
import type { HttpResult } from "./http.js";

/** What the contract check of one test file saw (docs/design/edge.md#contract-checks). */
export interface ContractTally {
  /** Requests to a registered APS origin whose request and answer were validated. */
  validated: number;
  /** Answers that disagree with the document (must stay 0). */
  responseViolations: ContractViolation[];
  /** Requests the document refuses; answered 4xx, they are a test's deliberate bad input. */
  requestViolations: RequestViolation[];
  /** Requests to /v1 paths of origins not registered as APS (stubs, receivers): not validated. */
  skipped: number;
}

interface State {
  validator?: ContractValidator;
  document?: object;
  origins: Set<string>;
  original: typeof fetch;
  tally: ContractTally;
}

const KEY = Symbol.for("aps.testkit.contract");
const state = () => (globalThis as unknown as Record<symbol, State | undefined>)[KEY];

/**
 * Routes every `fetch` of this JS realm through a {@link ContractValidator} over `document` (the
 * gateway's OpenAPI document): each request to a `/v1` path of an origin registered with
 * {@link registerApsOrigin} has its request and its answer checked — the answer is read from a
 * clone, so the caller still gets the body; `text/event-stream` answers are not read. Installed
 * once per realm (a jest test file) by test/support/contract.setup.ts; idempotent.
 */
export function installContractCheck(document: object): void {
  if (state()) return;
  const original = globalThis.fetch;
  const s: State = {
    document,
    origins: new Set(),
    original,
    tally: { validated: 0, responseViolations: [], requestViolations: [], skipped: 0 },
  };
  (globalThis as unknown as Record<symbol, State>)[KEY] = s;
  globalThis.fetch = async function contractFetch(
    input: string | URL | Request,
    init?: RequestInit,
  ): Promise<Response> {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (!/^\/v1(\/|$)/.test(url.pathname)) return original(input, init);
    if (!s.origins.has(url.origin)) {
      s.tally.skipped++;
      return original(input, init);
    }
    const method = (input instanceof Request ? input.method : (init?.method ?? "GET")).toUpperCase();
    const headers = new Headers(input instanceof Request ? input.headers : init?.headers);
    if (init?.headers && input instanceof Request) new Headers(init.headers).forEach((v, k) => headers.set(k, v));
    const body = await bodyText(input, init);
    const res = await original(input, init);
    const type = res.headers.get("content-type") ?? "";
    if (/^text\/event-stream/.test(type)) return res;
    // A CORS preflight (OPTIONS with Access-Control-Request-Method) belongs to the Fetch standard's
    // protocol, not to the API: the document describes operations, not preflights.
    if (method === "OPTIONS" && headers.has("access-control-request-method")) return res;
    // 431 (RFC 6585) is answered by the HTTP server while it parses an oversized head, before any
    // operation is routed (docs/reference/http.md); it is no operation's answer.
    if (res.status === 431) return res;
    const text = await res.clone().text();
    let parsed: unknown = text;
    if (/json/.test(type) && text)
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = text;
      }
    const result: HttpResult = { status: res.status, headers: res.headers, body: parsed, text };
    const path = url.pathname.slice(3) + url.search;
    s.validator ??= new ContractValidator(document as ConstructorParameters<typeof ContractValidator>[0]);
    const before = s.validator.violations.length;
    const beforeReq = s.validator.requestViolations.length;
    try {
      s.validator.check(method, path, result);
      s.validator.checkRequest(method, path, { headers, body }, res.status);
    } catch (err) {
      // A fault of the validator is reported as a violation, never thrown into the caller's fetch.
      s.validator.violations.push({ method, path, status: res.status, problem: `validator error: ${String(err)}` });
    }
    s.tally.validated++;
    s.tally.responseViolations.push(...s.validator.violations.slice(before));
    s.tally.requestViolations.push(...s.validator.requestViolations.slice(beforeReq));
    return res;
  };
}

/** The text of a request's body, when it is one fetch can show without consuming (string, bytes, a Request). */
async function bodyText(input: string | URL | Request, init?: RequestInit): Promise<string | undefined> {
  const b = init?.body;
  if (typeof b === "string") return b;
  if (b instanceof Uint8Array) return Buffer.from(b).toString("utf8");
  if (b instanceof ArrayBuffer) return Buffer.from(b).toString("utf8");
  if (b === undefined && input instanceof Request && input.body) return input.clone().text();
  return undefined;
}

/** Marks `baseUrl`'s origin (e.g. `http://localhost:4321/v1`) as an APS gateway whose answers are validated. */
export function registerApsOrigin(baseUrl: string): void {
  state()?.origins.add(new URL(baseUrl).origin);
}

/** The tally of this realm's contract check (undefined when it is not installed). */
export function contractTally(): ContractTally | undefined {
  return state()?.tally;
}
