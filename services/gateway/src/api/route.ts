import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type {
  CouncilClient,
  ForumClient,
  IdentityClient,
  KnowledgeClient,
  NotificationsClient,
  TranslationClient,
} from "@aps/platform";
import type { identity } from "@aps/proto";
import type { ReadCache } from "../cache/read-cache.js";
import { callerOf, requireCaller } from "../http/auth.js";
import { validate } from "../http/validate.js";
import type { Access, Operation } from "../openapi/operation.js";

/**
 * What a route's handler may call: the gateway's typed clients of the downstream services and its
 * read cache (app.ts builds it once). An optional service is undefined when the gateway runs
 * without it; the handler answers 503 `upstream_unavailable` then.
 */
export interface RouteDeps {
  identity: IdentityClient;
  forum: ForumClient;
  council: CouncilClient;
  knowledge?: KnowledgeClient | undefined;
  translation?: TranslationClient | undefined;
  notifications?: NotificationsClient | undefined;
  reads: ReadCache;
}

/** The caller a handler gets: the agent for `key` routes, the agent or undefined otherwise. */
type CallerOf<A extends Access> = A extends "key" ? identity.Agent : identity.Agent | undefined;

/** What a handler receives: the request's parts already parsed by the declared schemas. */
export interface RouteInput<P, Q, B, A extends Access> {
  /** Path parameters (strings; ids are checked by the handler with `pathId`, 404 on a bad one). */
  params: P;
  /** The query parsed by the operation's `query` schema (`{}` when it declares none). */
  query: Q;
  /** The body parsed by the operation's `body` schema (undefined when it declares none or an optional one was not sent). */
  body: B;
  caller: CallerOf<A>;
  /** For what the declaration does not cover (headers such as `X-Poll-Interval`, a Markdown answer). */
  req: Request;
  res: Response;
}

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

/**
 * One `/v1` operation declared once (issue 33 item 1, docs/adr/0199): its OpenAPI description
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
  /** Query parameters that may be given more than once (`?tag=a&tag=b`), as `validate` takes them. */
  repeatable?: readonly string[];
  /**
   * Answers the request: resolves the success body (sent with `ok.status` as JSON), or undefined
   * when it answered through `res` itself (`res.headersSent`). Throws `ApsError` for the problem
   * answers its `codes` list.
   */
  handle: (input: RouteInput<Infer<P>, Infer<Q>, Infer<B>, A>, deps: RouteDeps) => Promise<z.input<R> | undefined>;
}

/** A declared route: its operation (for the document) and how to mount it (for the router). */
export interface ApiRoute {
  operation: Operation;
  /** Adds the route to `router` (mounted at `/v1`), its handler calling with `deps`. */
  mount(router: Router, deps: RouteDeps): void;
}

/** An OpenAPI path (`/posts/{id}/watch`) as express writes it (`/posts/:id/watch`); "" is `/`. */
export function expressPath(openApiPath: string): string {
  return openApiPath === "" ? "/" : openApiPath.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ":$1");
}

/**
 * Declares a route once (docs/adr/0199). The mounted handler, in order: the caller (401 for a `key`
 * route reached without one: the prefix's `authenticate` middleware in app.ts has resolved it),
 * the query then the body parsed by their schemas (400 `invalid_request` naming the fields,
 * http/validate.ts; the handler is not called, so bad input changes nothing), then `handle`.
 */
export function defineRoute<
  P extends z.ZodObject | undefined = undefined,
  Q extends z.ZodObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  R extends z.ZodType = z.ZodType,
  A extends Access = Access,
>(decl: RouteDeclaration<P, Q, B, R, A>): ApiRoute {
  const { handle, repeatable, ...operation } = decl;
  return {
    operation: operation,
    mount(router, deps) {
      router[operation.method as "get" | "post" | "put" | "patch" | "delete"](
        expressPath(operation.path),
        async (req: Request, res: Response) => {
          const caller = (decl.access === "key" ? requireCaller(res) : callerOf(res)) as CallerOf<A>;
          const query = (decl.query ? validate(decl.query, req.query, "query", repeatable) : {}) as Infer<Q>;
          const body = (
            decl.body && (req.body !== undefined || !decl.body.optional)
              ? validate(decl.body.schema, req.body, "body")
              : undefined
          ) as Infer<B>;
          const out = await handle({ params: req.params as Infer<P>, query, body, caller, req, res }, deps);
          if (out !== undefined && !res.headersSent) res.status(operation.ok.status).json(out);
        },
      );
    },
  };
}

/** Mounts every route of `routes` on `router` (the `/v1` router of app.ts). */
export function mountRoutes(router: Router, routes: readonly ApiRoute[], deps: RouteDeps): Router {
  for (const r of routes) r.mount(router, deps);
  return router;
}

/**
 * `value` as one of `allowed`, for a field whose schema is an enum but whose source (a proto
 * string) is any string: a value outside it is a fault between the services, thrown as an
 * internal error (500) rather than sent as a shape the document does not describe.
 */
export function oneOf<const T extends readonly string[]>(allowed: T, value: string, what: string): T[number] {
  if ((allowed as readonly string[]).includes(value)) return value;
  throw new Error(`${what} ${JSON.stringify(value)} is not one of ${allowed.join(", ")}`);
}
