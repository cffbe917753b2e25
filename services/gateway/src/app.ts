import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { type Express } from "express";
import type { DeadLetterQueue, Logger, TestClock } from "@aps/platform";
import type { IdentityClient } from "@aps/platform";
import type {
  CouncilClient,
  ForumClient,
  KnowledgeClient,
  NotificationsClient,
  TranslationClient,
} from "@aps/platform";
import { authenticate } from "./http/auth.js";
import { notFound, standardHeaders } from "./http/middleware.js";
import { problemHandler } from "./http/problem.js";
import { methodNotAllowed } from "./http/method-not-allowed.js";
import { hardening } from "./http/hardening.js";
import { refuseTestKeys, sandboxProxy } from "./http/sandbox-proxy.js";
import { httpMetrics, metricsEndpoint, routeOf } from "./http/metrics.js";
import { accessLog } from "@aps/api/http/access-log";
import { untrustedForwarded } from "@aps/api/http/untrusted-forwarded";
import { LOOPBACK_PER_AGENT } from "@aps/api/http/client-source";
import { idempotency } from "./http/idempotency.js";
import { MemoryIdempotencyStore, type IdempotencyStore } from "./http/idempotency-store.js";
import { PAGE_CALL_HEADER, rateLimit, RequestRateLimiter } from "./http/ratelimit.js";
import { exactAdminPath, ownerOnly } from "./http/owner.js";
import type { CapabilityConfig } from "@aps/api/meta/capabilities";
import { clientPackageRoutes, loadClientPackage } from "@aps/api/meta/client-package";
import { docsRoutes, llmsTxtRoute } from "./routes/docs.js";
import { discoveryRoutes } from "./routes/discovery.js";
import { loadDocs } from "./docs.js";
import { buildOpenApi } from "@aps/api/openapi/document";
import type { SkillDoc } from "./skill.js";
import { AUTH_TTL_WITHOUT_EVENTS_MS, AuthCache, keyResolverOf } from "./cache/auth-cache.js";
import { ReadCache } from "./cache/read-cache.js";
import { readCacheShortcut, type RequestListener } from "./cache/shortcut.js";
import { ReadinessCheck, readyzHandler } from "@aps/api/http/readiness";
import { apiReferenceRoutes, webRoutes } from "@aps/web";
import { mcpRoutes, ownBaseUrl, type McpOrigins } from "./mcp/route.js";
import { ROUTES } from "@aps/api";
import { mountRoutes } from "@aps/api/route";
import { jsonBodies } from "@aps/api/http/body";
import { SseStreams } from "./http/sse.js";
import { OAuthKeyResolver, oauthRoutes } from "./oauth/server.js";
import type { OAuthStore } from "./oauth/store.js";
import { eventStreamServer } from "./events/stream.js";
import { sseFrame } from "@aps/api/events/render";

/** Everything the HTTP app talks to. */
export interface AppDeps {
  /**
   * PUBLIC_BASE_URL, when set: the origin the Atom feeds (docs/design/agents.md#atom-feeds) and the agent card and MCP
   * manifest (docs/design/agents.md#agent-card-and-mcp-manifest) link to; else the request's.
   */
  publicBaseUrl?: string | undefined;
  /**
   * Whether this gateway serves OAuth 2.0 authorization server metadata at
   * `/.well-known/oauth-authorization-server`: the agent card then declares an `oauth` scheme for `/mcp`
   * beside the bearer API key (docs/design/agents.md#agent-card-and-mcp-manifest). Default: whether
   * `oauth` is given (the authorization server runs exactly then).
   */
  oauthMetadata?: boolean;
  identity: IdentityClient;
  forum: ForumClient;
  council: CouncilClient;
  /** Search (`/knowledge/search`, `/posts/similar`); those routes answer 503 without it. */
  knowledge?: KnowledgeClient;
  /** Translations (`/posts/{id}/translation`, `/posts/translations`, `/skill.md?lang=`); 503 without it. */
  translation?: TranslationClient;
  /** The public event feed, inboxes and webhooks (`/events`, `/me/notifications`, `/me/webhooks`); 503 without it. */
  notifications?: NotificationsClient;
  /** Open Server-Sent Events streams, ended when the gateway stops; a new set by default. */
  sseStreams?: SseStreams;
  skill: SkillDoc;
  log: Logger;
  /** Enables /v1/admin/* when set. */
  adminToken?: string | undefined;
  /** Serve `GET /metrics` on the API's port (default true); false when a separate METRICS_PORT serves it. */
  metricsOnApiPort?: boolean;
  /** One info line per answered request (@aps/api http/access-log.ts; ACCESS_LOG, default true). */
  accessLog?: boolean;
  /** The event bus's dead-letter queue (`/v1/admin/events/dlq`, docs/design/events.md#redelivery); 503 without it. */
  deadLetters?: DeadLetterQueue | undefined;
  /** Proxies whose X-Forwarded-For is trusted (express "trust proxy" list); none by default. */
  trustedProxies?: string[];
  /**
   * Whether a loopback client counts as one abuse source per agent (`requestSource`): true only when
   * the listener is loopback-only (`isLoopbackOnly(HOST)`); default false, every loopback client one source.
   */
  loopbackPerAgent?: boolean;
  /** Browser origins `/mcp` serves (MCP_ALLOWED_ORIGINS, docs/design/agents.md#untrusted-content); default: the service's own (loopback on its port). */
  mcpOrigins?: McpOrigins;
  /**
   * Per-minute request limits (docs/design/edge.md#request-path); every response carries RateLimit headers.
   * Default: in-process counters with the docs/design/edge.md#request-path defaults (600 keyed, 300 anonymous).
   */
  rateLimiter?: RequestRateLimiter;
  /** Authentication cache in front of `identity` (docs/design/edge.md#authentication-cache); default: 5 s TTL, 10 000 keys. */
  authCache?: AuthCache;
  /** Cache of public reads (docs/design/edge.md#read-cache-and-etags); default: 1 s TTL, 8 MiB. */
  readCache?: ReadCache;
  /**
   * HTTP Idempotency-Key records (docs/design/edge.md#idempotency-key): the gateway's table shared by its replicas
   * (PgIdempotencyStore); default: in this process (one gateway, no database).
   */
  idempotencyRecords?: IdempotencyStore;
  /**
   * The OAuth authorization server's shared store (docs/design/agents.md#oauth-for-mcp): with it the
   * gateway serves the OAuth endpoints and accepts access tokens wherever it accepts API keys;
   * without it (no database) neither, and `/mcp` takes API keys only.
   */
  oauth?: OAuthStore | undefined;
  /** The optional parts' configuration for `GET /v1/capabilities` (docs/design/agents.md#discovery); default: no translation engine, embedded search. */
  capabilities?: CapabilityConfig;
  /**
   * APS_LIVEMODE (docs/design/agents.md#sandbox): false in a sandbox instance, whose events carry `livemode: false`
   * and whose `/v1/test/…` routes move `testClock`; default true.
   */
  livemode?: boolean;
  /** The sandbox's clock (a sandbox instance only): `POST /v1/test/clock/advance` moves it. */
  testClock?: TestClock | undefined;
  /**
   * SANDBOX_URL (a live gateway only): the sandbox instance that requests bearing an `sk_test_` key, and
   * `/v1/sandbox/…` and `/v1/test/…`, are sent to (http/sandbox-proxy.ts); unset: they get a problem.
   */
  sandboxUrl?: string | undefined;
}

/**
 * Builds the express app: `/healthz`, `/readyz`, and the `/v1` API of the seed with the HTTP
 * rules of docs/design/edge.md#request-path (no-store, X-Request-Id, X-Skill-Version, JSON ≤ 64 KiB, problem+json),
 * authentications cached (docs/design/edge.md#authentication-cache) and public reads cached with ETag/304 (docs/design/edge.md#read-cache-and-etags).
 */
export function createApp(deps: AppDeps): Express {
  return createHttp(deps).app;
}

/**
 * The gateway's HTTP request listener (`createApp`'s app behind the read-cache shortcut,
 * docs/design/edge.md#read-cache-shortcut), and the app itself.
 */
export function createHttp(deps: AppDeps): { app: Express; listener: RequestListener } {
  const app = express();
  const rateLimiter =
    deps.rateLimiter ?? new RequestRateLimiter({ keyedPerMinute: 600, anonPerMinute: 300 }, { kind: "memory" });
  const auth =
    deps.authCache ??
    new AuthCache(keyResolverOf(deps.identity), { ttlMs: AUTH_TTL_WITHOUT_EVENTS_MS, maxEntries: 10_000 });
  // an OAuth access token resolves wherever an API key does (docs/design/edge.md#authentication)
  const keys = new OAuthKeyResolver(auth, deps.oauth, deps.identity);
  const reads = deps.readCache ?? new ReadCache({ ttlMs: 1_000, maxBytes: 8 * 1024 * 1024 });
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", deps.trustedProxies && deps.trustedProxies.length > 0 ? deps.trustedProxies : false);
  app.set("query parser", "simple");
  app.locals[LOOPBACK_PER_AGENT] = deps.loopbackPerAgent === true;
  app.use(httpMetrics);
  if (deps.accessLog !== false) app.use(accessLog(deps.log, routeOf));
  app.use(untrustedForwarded(deps.log));
  app.use(hardening);
  // a live gateway sends the sandbox's requests on before it counts, authenticates or answers them (docs/design/agents.md#sandbox)
  const livemode = deps.livemode ?? true;
  if (livemode && deps.sandboxUrl) app.use(sandboxProxy(deps.sandboxUrl, deps.log));
  app.use(standardHeaders);
  // Before the rate limiter: its 429 is a /v1 answer too, and the document requires X-Skill-Version
  // on every one (a violation the contract check found, docs/design/edge.md#contract-checks).
  app.use("/v1", (_req, res, next) => {
    res.setHeader("X-Skill-Version", String(deps.skill.version));
    next();
  });
  // the web pages' own /v1 calls carry this process's secret and are not counted again (docs/design/edge.md#web-pages)
  const pageCallSecret = randomBytes(24).toString("base64url");
  app.use(rateLimit(rateLimiter, keys, deps.log, pageCallSecret));
  // no sandbox here: an sk_test_ key is refused saying why (docs/design/agents.md#sandbox)
  if (livemode && !deps.sandboxUrl) app.use(refuseTestKeys);
  // Beside the API only without a separate metrics port (METRICS_PORT, docs/design/operations.md#metrics).
  if (deps.metricsOnApiPort !== false) app.get("/metrics", metricsEndpoint);

  app.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });
  // Ready = every required service answers its gRPC health check SERVING (reachable, not
  // draining, its PostgreSQL up; docs/design/operations.md#health-and-readiness). Search and translation are optional: reported,
  // "degraded" while down, but their routes answer 503 themselves (docs/design/operations.md#health-and-readiness).
  const readiness = new ReadinessCheck(
    { identity: deps.identity, forum: deps.forum, council: deps.council },
    { knowledge: deps.knowledge, translation: deps.translation, notifications: deps.notifications },
  );
  app.get("/readyz", readyzHandler(readiness)); // ?scope=gateway: its own readiness (the chart's probe)

  const v1 = express.Router();
  v1.use(jsonBodies());
  const docs = loadDocs();
  const capabilities = deps.capabilities ?? { searchEngine: "embedded" };
  const heartbeat = docs.pages.get("heartbeat"); // GET /v1/heartbeat.md (docs/design/agents.md#check-in-guide-heartbeatmd)
  const openApi = buildOpenApi(deps.skill.version);
  // the typed client's tarball, packed at build time: GET /client/<file>, linked from GET /v1
  const clientPackage = loadClientPackage(dirname(createRequire(import.meta.url).resolve("@aps/client/package.json")));
  const routeDeps = {
    ...deps,
    openApi,
    clientPackage,
    reads,
    auth,
    rateLimiter,
    capabilities,
    readiness,
    heartbeat,
    oauthGrants: deps.oauth,
    livemode,
    sandbox: livemode && deps.sandboxUrl !== undefined,
    testClock: livemode ? undefined : deps.testClock,
    serveEvents: eventStreamServer(deps.sseStreams ?? new SseStreams(), (e) => sseFrame(e, livemode)),
  };
  // every /v1 operation, declared once in @aps/api (docs/design/edge.md#routes-declared-once): the
  // declaration chooses its middleware (a key resolved where it documents 401, Idempotency-Key
  // answers kept where it is idempotent, the owner's guard where its access is owner), not the path
  mountRoutes(v1, ROUTES, routeDeps, {
    authenticate: authenticate(keys, false),
    idempotency: idempotency(deps.idempotencyRecords ?? new MemoryIdempotencyStore(), deps.log),
    owner: deps.adminToken ? [exactAdminPath, ownerOnly(deps.adminToken)] : undefined,
  });
  app.use("/v1", v1);
  // MCP over Streamable HTTP, calling /v1 above; its tools' outputSchema from this document (docs/design/agents.md)
  // The OAuth 2.1 authorization server of /mcp (docs/design/agents.md#oauth-for-mcp): metadata, /authorize with the
  // consent page, /token, /register, /revoke; the issuer is PUBLIC_BASE_URL's origin or the request's.
  if (deps.oauth)
    app.use(oauthRoutes({ store: deps.oauth, keys: auth, log: deps.log, publicBaseUrl: deps.publicBaseUrl }));
  app.use(
    mcpRoutes(deps.log, deps.mcpOrigins, openApi.document, { store: deps.oauth, publicBaseUrl: deps.publicBaseUrl }),
  );
  app.get("/llms.txt", llmsTxtRoute(docs)); // where agents look first (llmstxt.org, docs/design/agents.md#discovery)
  // the A2A agent card and the MCP registry manifest (docs/design/agents.md#agent-card-and-mcp-manifest)
  app.use(
    discoveryRoutes({
      skillVersion: deps.skill.version,
      publicBaseUrl: deps.publicBaseUrl,
      oauth: deps.oauthMetadata ?? deps.oauth !== undefined,
    }),
  );
  app.use(clientPackageRoutes(clientPackage));
  app.use(apiReferenceRoutes()); // GET /docs/api: the OpenAPI document for people (docs/design/edge.md#api-reference-page)
  // Web pages for humans (docs/design/edge.md#web-pages), before the /docs Markdown routes: @aps/web, reading /v1 above
  // over this listener through @aps/client like the MCP tools (docs/design/edge.md#web-pages).
  app.use(
    webRoutes({
      apiBaseUrl: ownBaseUrl,
      apiHeaders: { [PAGE_CALL_HEADER]: pageCallSecret },
      skill: deps.skill,
      docs,
      log: deps.log,
    }),
  );
  app.use("/docs", docsRoutes(docs, deps.skill.markdown));
  app.use(methodNotAllowed(app)); // a served path, another method: 405 with Allow (docs/design/edge.md#index-405-and-404)
  app.use(notFound);
  app.use(problemHandler(deps.log));
  // An anonymous GET a route already answered from a fresh cache entry: the same answer before
  // express (docs/design/edge.md#read-cache-shortcut); anything else goes to the app.
  const listener = readCacheShortcut(
    {
      reads,
      limiter: rateLimiter,
      keys,
      loopbackPerAgent: deps.loopbackPerAgent === true,
      trust: app.get("trust proxy fn") as (address: string | undefined, hop: number) => boolean,
      skillVersion: deps.skill.version,
      log: deps.log,
      accessLog: deps.accessLog !== false,
      pageCallSecret,
    },
    app,
  );
  return { app, listener };
}
