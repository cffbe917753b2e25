import {
  Router as newRouter,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from "express";
import { z } from "zod";
import type {
  CouncilClient,
  DeadLetterQueue,
  ForumClient,
  IdentityClient,
  KnowledgeClient,
  Logger,
  NotificationsClient,
  TestClock,
  TranslationClient,
} from "@aps/platform";
import type { identity as proto } from "@aps/proto";
import type { OAuthGrants } from "./identity/oauth-grants.js";
import { callerOf, readOnlyRefusal, requireCaller, scopeRefusal } from "./http/locals.js";
import type { CapabilityConfig, ReadinessSource } from "./meta/capabilities.js";
import { pathId, validate } from "./http/validate.js";
import { dryRunMiddleware, withoutDryRun } from "./http/dry-run.js";
import type { Access, Operation } from "./openapi/operation.js";
import type { ClientPackage } from "./meta/client-package.js";

/**
 * What a cached read depends on, for invalidation (docs/design/edge.md#read-cache-and-etags):
 * - `post`: one post's detail (`GET /posts/{id}`), dropped by any event or write about that post;
 * - `collection`: a page that may show any post (`/posts` lists, `/agenda`), dropped by every
 *   forum or council event and write;
 * - `search`: a search result (`/knowledge/search`), dropped like a collection and also whenever
 *   the search index changes (`knowledge.post_indexed`, after the forum's event).
 */
export type ReadScope = { kind: "collection" } | { kind: "search" } | { kind: "post"; postId: string };

/** The read cache's key of `GET /posts/{id}` (the route reads no query parameter): a write drops it. */
export const postKey = (postId: string): string => `/posts/${postId}`;

/**
 * The gateway's cache of public reads as a handler uses it (cache/read-cache.ts `ReadCache`,
 * docs/design/edge.md#read-cache-and-etags): `serve` answers GET `key` (a normalised URL) from the cache or from `produce`
 * (the JSON body) with a strong ETag (304 to a matching If-None-Match); `serveUncached` the same
 * without storing (a keyed viewer's answer); a write drops what it changed before it answers.
 */
export interface Reads {
  serve(req: Request, res: Response, key: string, scope: ReadScope, produce: () => Promise<unknown>): Promise<void>;
  serveUncached(req: Request, res: Response, produce: () => Promise<unknown>): Promise<void>;
  /** Drops post `postId`'s detail and every collection (read-your-writes). */
  invalidatePost(postId: string): void;
  /** Drops everything (an agent's name or badge shows on many answers). */
  invalidateAll(): void;
}

/**
 * The gateway's authentication cache as a handler uses it (cache/auth-cache.ts `AuthCache`,
 * docs/design/edge.md#authentication-cache): a write that changes an agent's keys, seats or profile drops its entries.
 */
export interface Authentications {
  /** The agent of API key `apiKey`; rejects as identity `Authenticate` does (401). */
  authenticate(apiKey: string): Promise<proto.Agent>;
  dropAgent(agentId: string): void;
}

/** One agent's per-minute request counter as `GET /me/quotas` reads it (http/ratelimit.ts, docs/design/edge.md#request-path). */
export interface RequestCounters {
  /** What `partition` has left this window, read without counting (`resetSeconds` ≥ 0). */
  peek(
    policy: "keyed",
    partition: string,
  ): Promise<{ limit: number; used: number; remaining: number; resetSeconds: number }>;
}

/** A validated `GET /events/stream` request (api/events/stream-events.ts). */
export interface EventStreamRequest {
  /** The client's source (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source), for EVENT_STREAMS_PER_SOURCE. */
  source: string;
  /** The caller's agent when the request carried a valid key, for EVENT_STREAMS_PER_AGENT; undefined without one. */
  agentId?: string | undefined;
  /** `Last-Event-ID` or `after` (a decimal feed cursor); undefined = start at the live end. */
  cursor: string | undefined;
  /** Event types to send; empty = every type. */
  types: string[];
}

/** The interface description served at `/v1/skill.md` (seed "Versioning"). */
export interface SkillDoc {
  /** Markdown text; its first line is `SKILL_VERSION: N`. */
  markdown: string;
  version: number;
}

/** A reference page as served (docs/reference, docs/design/agents.md#discovery): its Markdown and strong ETag. */
export interface ServedPage {
  markdown: string;
  etag: string;
}

/** The OpenAPI document as served: its JSON text and strong ETag (openapi/document.ts `OpenApiDoc`). */
export interface ServedDocument {
  json: string;
  etag: string;
}

/**
 * What a route's handler may call (docs/design/edge.md#routes-declared-once): the typed clients of the downstream services
 * and a small context the gateway provides — its read cache, authentication cache, request
 * counters, event streams, readiness and the documents it serves (app.ts builds them once). An
 * optional service is undefined when the gateway runs without it; the handler answers 503
 * `upstream_unavailable` then.
 */
export interface RouteDeps {
  identity: IdentityClient;
  forum: ForumClient;
  council: CouncilClient;
  knowledge?: KnowledgeClient | undefined;
  translation?: TranslationClient | undefined;
  notifications?: NotificationsClient | undefined;
  reads: Reads;
  /** Authentications cached (docs/design/edge.md#authentication-cache): a write that changes an agent's keys, seats or profile drops its entries. */
  auth: Authentications;
  /** The per-minute request limits (docs/design/edge.md#request-path); `GET /me/quotas` reads its counters without counting. */
  rateLimiter: RequestCounters;
  /**
   * Serves `GET /events/stream` on `res` from `feed` (the gateway's bounded SSE plumbing,
   * events/stream.ts, docs/design/events.md#event-stream-sse): resolves when the stream ends; rejects with a problem
   * (429/503) when it is not admitted.
   */
  serveEvents: (res: Response, request: EventStreamRequest, feed: NotificationsClient) => Promise<void>;
  /** skill.md as served (`GET /skill.md`, its SKILL_VERSION in `GET /v1` and `/skill-version`). */
  skill: SkillDoc;
  /** The reference page `heartbeat` (docs/reference/heartbeat.md) that `GET /heartbeat.md` serves. */
  heartbeat?: ServedPage | undefined;
  /** The optional parts' configuration (`GET /capabilities`, docs/design/agents.md#discovery). */
  capabilities: CapabilityConfig;
  /** The gateway's readiness (`GET /capabilities` reports whether the optional parts answer). */
  readiness: ReadinessSource;
  /** The gateway's logger (a council write that answers before the forum's projection caught up is logged, docs/design/council.md#the-forums-projection-of-the-case). */
  log?: Logger | undefined;
  /** The event bus's dead-letter queue (`/admin/events/dlq`, docs/design/events.md#redelivery); the routes answer 503 without it. */
  deadLetters?: DeadLetterQueue | undefined;
  /** The OpenAPI document as served (`GET /openapi.json`), built once at start (docs/design/edge.md#the-openapi-document). */
  openApi: ServedDocument;
  /** The packed `@aps/client` served at `/client/…`, linked from `GET /v1` (docs/reference/client.md); absent when not built. */
  clientPackage?: ClientPackage | undefined;
  /** The gateway's OAuth grants (`/me/oauth-grants`, docs/design/agents.md#oauth-for-mcp); those routes answer 503 without it. */
  oauthGrants?: OAuthGrants | undefined;
  /** PUBLIC_BASE_URL: the public origin absolute links name (the Atom feeds, docs/design/agents.md#atom-feeds); else the request's. */
  publicBaseUrl?: string | undefined;
  /** APS_LIVEMODE: false in a sandbox instance, whose events say `livemode: false` (docs/design/agents.md#sandbox). */
  livemode: boolean;
  /** Whether a sandbox answers `/v1/sandbox/…` beside this live instance (SANDBOX_URL; docs/design/agents.md#sandbox). */
  sandbox?: boolean | undefined;
  /** The sandbox's test clock (a sandbox instance only; docs/design/agents.md#sandbox): the `/test/…` routes answer 404 without it. */
  testClock?: TestClock | undefined;
}

/** The caller a handler gets: the agent for `key` routes, the agent or undefined otherwise. */
type CallerOf<A extends Access> = A extends "key" ? proto.Agent : proto.Agent | undefined;

/** What a handler receives: the request's parts already parsed by the declared schemas. */
export interface RouteInput<P, Q, B, A extends Access> {
  /** Path parameters (strings; those named in `ids` already checked, 404 on a bad one; others checked by the handler with `pathId`). */
  params: P;
  /** The query parsed by the operation's `query` schema (`{}` when it declares none). */
  query: Q;
  /** The body parsed by the operation's `body` schema (undefined when it declares none or an optional one was not sent). */
  body: B;
  caller: CallerOf<A>;
  /** For what the declaration does not cover (headers such as `X-Poll-Interval`, a Markdown answer). */
  req: Request;
  res: Response;
  /** Leaves the request to the next route (`GET /skill.md?lang=` other than en: the translated answer, after authentication). */
  next: NextFunction;
}

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * One `/v1` operation declared once (docs/design/edge.md#routes-declared-once): its OpenAPI description
 * (openapi/operation.ts `Operation`: path, access, request and response schemas, error codes) and
 * its handler. The express route, the OpenAPI document (and from it `@aps/client`'s types and the
 * MCP tools' `outputSchema`) all come from this one value. The handler's return type is the
 * success schema's, so a handler cannot answer a shape its document does not describe (compile
 * time; the contract tests check the wire).
 */
export interface RouteDeclaration<
  P extends z.ZodObject | undefined,
  Q extends z.ZodObject | undefined,
  B extends z.ZodType | undefined,
  R extends z.ZodType,
  A extends Access,
> extends Omit<Operation, "params" | "query" | "body" | "ok" | "access"> {
  access: A;
  params?: P;
  query?: Q;
  /** JSON request body; `optional` when the route also accepts none. */
  body?: { schema: NonNullable<B>; optional?: boolean };
  ok: Omit<Operation["ok"], "schema"> & { schema: R };
  /**
   * Path ids checked before the query and the body, by parameter: `[prefix, what]` (`["p_", "post"]`);
   * a malformed one is 404 `not_found` (http/validate.ts `pathId`), as the document says.
   */
  ids?: { readonly [K in keyof Infer<P>]?: readonly [prefix: string, what: string] };
  /**
   * Parse the path parameters with `params` (400 `invalid_request` naming them, as query
   * parameters) before the query and the body: the owner's routes, whose ids are not ULIDs.
   */
  checkParams?: true;
  /**
   * Checks the caller or a header before the path, the query and the body are read (a seat: 403
   * `forbidden`; a malformed `Idempotency-Key`: 400); throws `ApsError`.
   */
  guard?: (caller: CallerOf<A>, req: Request) => void;
  /**
   * The route does not run the `authenticate` middleware (MountOptions): the handler checks the
   * presented key itself and parses the body after it (`POST /me/keys/rotate`: a just-revoked key
   * may complete a lost rotation, docs/design/edge.md#authentication), or answers what needs no key
   * and hands the rest on with `next` to a route that continues it (`GET /skill.md`: the English
   * original for anyone, `?lang=` to `translateSkill`). The route does not require a caller
   * (`caller` is undefined whatever `access` says) and does not parse `body` (`body` is undefined).
   */
  checksKeyItself?: true;
  /**
   * Continues the operation of another route on the same method and path, mounted after it, which
   * hands it the request with `next` (`translateSkill` continues `getSkill`): the document lists
   * the operation once, from the route it continues (`documentedOperations`).
   */
  continues?: ApiRoute;
  /** Query parameters that may be given more than once (`?tag=a&tag=b`), as `validate` takes them. */
  repeatable?: readonly string[];
  /**
   * Answers the request: resolves the success body (sent with `ok.status` as JSON), or undefined
   * when it answered through `res` itself (`res.headersSent`). Throws `ApsError` for the problem
   * answers its `codes` list.
   */
  handle: (input: RouteInput<Infer<P>, Infer<Q>, Infer<B>, A>, deps: RouteDeps) => Promise<z.input<R> | undefined>;
}

/**
 * The gateway's middleware a route runs before its handler, chosen by the route's own declaration
 * rather than by its path or by a list (docs/design/edge.md#routes-declared-once):
 * - `authenticate` resolves a presented key (401 when unknown or revoked, 403 when suspended) on
 *   every route whose `codes` list `unauthenticated`, except one that checks its key itself
 *   (`checksKeyItself`) and the owner's: a route that documents no 401 ignores a key it is sent;
 * - `idempotency` keeps the answers of `Idempotency-Key` retries (docs/design/edge.md#idempotency-key)
 *   on a keyed route declared `idempotent` (one whose service does not record its key by itself);
 * - `owner` guards every route of access `owner` (the owner's token, the exact lowercase path);
 *   without it those routes are not mounted at all, so their paths answer 404.
 * Omitted: the route runs without it. Every write (a method other than GET) also takes
 * `?dryRun=true` (http/dry-run.ts, docs/design/edge.md#dry-run), after authentication and before
 * idempotency.
 */
export interface MountOptions {
  authenticate?: RequestHandler;
  idempotency?: RequestHandler;
  owner?: readonly RequestHandler[];
}

/** A declared route: its operation (for the document) and how to mount it (for the router). */
export interface ApiRoute {
  operation: Operation;
  /** The route whose operation this one continues (RouteDeclaration `continues`); undefined for most. */
  continues?: ApiRoute | undefined;
  /** Adds the route to `router` (mounted at `/v1`), its handler calling with `deps`, after `options`' middleware. */
  mount(router: Router, deps: RouteDeps, options?: MountOptions): void;
}

/** The query of an operation that declares none: any parameter is refused, naming it (http/validate.ts). */
const NO_QUERY = z.strictObject({});

/** An OpenAPI path (`/posts/{id}/watch`) as express writes it (`/posts/:id/watch`); "" is `/`. */
export function expressPath(openApiPath: string): string {
  return openApiPath === "" ? "/" : openApiPath.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ":$1");
}

/**
 * Declares a route once (docs/design/edge.md#routes-declared-once). The mounted handler, in order: the caller (401 for a `key`
 * route reached without one: the `authenticate` middleware of MountOptions has resolved it),
 * its `guard` (403), the path parameters (`checkParams`: 400; `ids`: 404), the query then the body parsed by their schemas (400 `invalid_request` naming the fields,
 * http/validate.ts; the handler is not called, so bad input changes nothing), then `handle`.
 */
export function defineRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
  A extends Access = Access,
>(decl: RouteDeclaration<P, Q, B, R, A>): ApiRoute {
  const { handle, repeatable, ids, guard, checksKeyItself, checkParams, continues, ...operation } = decl;
  // A presented key is checked only where the codes list 401 (MountOptions): a route that reads its
  // caller must list it, or its callers would be anonymous.
  if ((decl.access === "key" || decl.access === "optional") && !decl.codes.includes("unauthenticated"))
    throw new Error(`${decl.operationId}: a route with access "${decl.access}" lists "unauthenticated" in its codes`);
  return {
    operation: operation,
    continues,
    mount(router, deps, options) {
      const owner = decl.access === "owner";
      if (owner && !options?.owner) return;
      const before: RequestHandler[] = owner ? [...(options?.owner ?? [])] : [];
      if (options?.authenticate && !owner && !checksKeyItself && operation.codes.includes("unauthenticated"))
        before.push(options.authenticate);
      const write = operation.method !== "get";
      if (write) before.push(dryRunMiddleware);
      if (options?.idempotency && operation.idempotent && decl.access === "key" && !checksKeyItself)
        before.push(options.idempotency);
      router[operation.method as "get" | "post" | "put" | "patch" | "delete"](
        expressPath(operation.path),
        ...before,
        async (req: Request, res: Response, next: NextFunction) => {
          const caller = (
            decl.access === "key" && !checksKeyItself ? requireCaller(res) : callerOf(res)
          ) as CallerOf<A>;
          const readOnly =
            readOnlyRefusal(caller, operation.method) ??
            scopeRefusal(caller, operation.method, operation.path, operation.tag);
          if (readOnly) throw readOnly;
          guard?.(caller, req);
          const params = (
            checkParams && decl.params ? validate(decl.params, req.params, "query") : { ...req.params }
          ) as Record<string, string>;
          for (const [name, check] of Object.entries(ids ?? {}) as [string, readonly [string, string]][])
            params[name] = pathId(check[0], params[name], check[1]);
          const query = validate(
            decl.query ?? NO_QUERY,
            write ? withoutDryRun(req.query) : req.query,
            "query",
            repeatable,
          ) as Infer<Q>;
          const body = (
            decl.body && !checksKeyItself && (req.body !== undefined || !decl.body.optional)
              ? validate(decl.body.schema, req.body, "body")
              : undefined
          ) as Infer<B>;
          const out = await handle({ params: params as Infer<P>, query, body, caller, req, res, next }, deps);
          if (out !== undefined && !res.headersSent) res.status(operation.ok.status).json(out);
        },
      );
    },
  };
}

/**
 * Where a path stands in the mount order: per segment 0 for a literal, 1 for a parameter
 * (`{id}` or a segment holding one, such as `{feed}.atom`), so a literal segment sorts before a
 * parameter at the same place.
 */
function specificity(path: string): number[] {
  return path
    .split("/")
    .filter(Boolean)
    .map((segment) => (segment.includes("{") ? 1 : 0));
}

/** Compares two specificities element by element, then by length (a total order). */
function compareSpecificity(a: number[], b: number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

/**
 * `routes` in the order express must try them (docs/design/edge.md#routes-declared-once): by rule,
 * not by hand — where two paths could both match a request, the one with a literal segment where
 * the other has a parameter comes first (`/posts/similar` before `/posts/{id}`); otherwise, and
 * for a route that continues another on the same path, the list's order (a stable sort).
 */
export function mountOrder(routes: readonly ApiRoute[]): ApiRoute[] {
  return [...routes].sort((a, b) => compareSpecificity(specificity(a.operation.path), specificity(b.operation.path)));
}

/**
 * The operations of `routes` the document describes, in the list's order: each once (a route that
 * `continues` another is left out: its operation is the other's).
 */
export function documentedOperations(routes: readonly ApiRoute[]): Operation[] {
  return routes.filter((r) => r.continues === undefined).map((r) => r.operation);
}

/**
 * The shape of a path relative to `/v1` that decides which routes could match it: its first
 * segment (lower case: express matches paths case-insensitively) and its number of segments (one
 * trailing slash ignored, as express's non-strict matching does; a parameter never spans a `/`
 * and is never empty). `/posts/{id}/vote` and `/Posts/p_1/vote/` are both `posts#3`; the
 * index, `""` or `/`, is `#0`.
 */
export function pathShape(path: string): string {
  const p = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  if (p === "" || p === "/") return "#0";
  const segments = p.slice(1).split("/");
  return `${segments[0]!.toLowerCase()}#${segments.length}`;
}

/**
 * Mounts every route of `routes` on `router` (the `/v1` router of app.ts), each behind the
 * middleware its declaration chooses from `options` (MountOptions), through a route index
 * (docs/design/edge.md#routes-declared-once): the routes of one `pathShape` share a router of
 * their own, in `mountOrder`, and a request tries only the routers of its own shape — a handful of
 * routes, not the ~90 of `/v1` one after another. Every /v1 path starts with a literal segment
 * (thrown otherwise). The index's `stack` lists every group's layers, so the app's route list
 * (the 405 table, the document checks) still sees each route.
 */
export function mountRoutes(
  router: Router,
  routes: readonly ApiRoute[],
  deps: RouteDeps,
  options?: MountOptions,
): Router {
  const groups = new Map<string, Router>();
  for (const r of mountOrder(routes)) {
    const shape = pathShape(expressPath(r.operation.path));
    if (shape.startsWith(":"))
      throw new Error(`${r.operation.operationId}: a /v1 path starts with a literal segment, not ${r.operation.path}`);
    let group = groups.get(shape);
    if (!group) groups.set(shape, (group = newRouter()));
    r.mount(group, deps, options);
  }
  const index: RequestHandler & { stack?: unknown[] } = (req, res, next) => {
    const group = groups.get(pathShape(req.path));
    if (group) group(req, res, next);
    else next();
  };
  index.stack = [...groups.values()].flatMap((g) => (g as unknown as { stack: unknown[] }).stack);
  router.use(index);
  return router;
}

/**
 * `value` as one of `allowed`, for a field whose schema is an enum but whose source (a proto
 * string) is any string: a value outside it is a fault between the services, thrown as an
 * internal error (500) rather than sent as a shape the document does not describe.
 */
export function oneOf<const T extends readonly (string | number)[]>(
  allowed: T,
  value: string | number,
  what: string,
): T[number] {
  if (allowed.includes(value)) return value;
  throw new Error(`${what} ${JSON.stringify(value)} is not one of ${allowed.join(", ")}`);
}
