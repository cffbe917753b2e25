import createClient, { type Client, type FetchResponse, type MaybeOptionalInit } from "openapi-fetch";
import type { components, paths } from "./gen/openapi.js";

/** The schemas of the document (`components.schemas`), e.g. `Schemas["Post"]`. */
export type Schemas = components["schemas"];

/** The methods whose requests carry a JSON body. */
type BodyMethod = "post" | "put" | "patch" | "delete";

/** The request body the document declares for `Method` on `Path` (never when it declares none). */
type DeclaredBody<Path extends keyof paths, Method extends BodyMethod> =
  NonNullable<MaybeOptionalInit<paths[Path], Method>> extends { body?: infer B } ? NonNullable<B> : never;

/**
 * `never` for each top-level field of the given `body` that the document does not declare: a body
 * with a field the API would refuse (400, "unknown field") does not compile. openapi-fetch infers
 * the init from the argument, so TypeScript's own excess-property check never runs on it.
 */
type NoUnknownFields<Init, Declared> = Init extends { body: infer Given }
  ? Given extends readonly unknown[]
    ? unknown
    : Given extends object
      ? { body: { [K in Exclude<keyof Given, keyof Declared>]: never } }
      : unknown
  : unknown;

/**
 * Body fields the document requires under either of two names, which OpenAPI states in words and
 * openapi-typescript types as both optional: `POST /v1/posts` needs `is_arch_design` (or its alias
 * `isArchDesign`, docs/reference/proposing.md). By path and method: the names, then the one a type error names.
 */
interface EitherRequired {
  "/v1/posts": { post: ["is_arch_design" | "isArchDesign", "is_arch_design"] };
}

/** `{ body: { <name>: … } }` when the given `body` holds neither name of {@link EitherRequired}: the call does not compile. */
type NeedsEither<Path, Method, Init> = Path extends keyof EitherRequired
  ? Method extends keyof EitherRequired[Path]
    ? EitherRequired[Path][Method] extends [infer Names, infer Canonical extends string]
      ? Init extends { body: infer Given }
        ? [Names & keyof Given] extends [never]
          ? { body: { [K in Canonical]: boolean } }
          : unknown
        : unknown
      : unknown
    : unknown
  : unknown;

/**
 * openapi-fetch's method of `Method` (its `ClientMethod`, written out), with the body held to the
 * document's fields ({@link NoUnknownFields}) and its either-named required fields ({@link NeedsEither});
 * the answer is typed per path as before.
 */
type StrictBodyMethod<Method extends BodyMethod> = <
  Path extends PathsWith<Method>,
  Init extends MaybeOptionalInit<paths[Path], Method>,
>(
  url: Path,
  ...init: Record<never, never> extends Init
    ? [
        (Init &
          NoUnknownFields<Init, DeclaredBody<Path, Method>> &
          NeedsEither<Path, Method, Init> & { [key: string]: unknown })?,
      ]
    : [
        Init &
          NoUnknownFields<Init, DeclaredBody<Path, Method>> &
          NeedsEither<Path, Method, Init> & { [key: string]: unknown },
      ]
) => Promise<FetchResponse<Extract<paths[Path][Method], Record<string | number, unknown>>, Init, "application/json">>;

/** The paths that have `Method`. */
type PathsWith<Method extends BodyMethod> = {
  [P in keyof paths]: paths[P][Method] extends undefined ? never : P;
}[keyof paths];

/**
 * A client of the `/v1` API: `client.GET("/v1/posts/{id}", { params: { path: { id } } })`. A write's
 * `body` may hold only the fields the document declares (`{…, priority: 1}` is a type error, as the
 * API answers it 400).
 */
export type ApsClient = Omit<Client<paths, "application/json">, "POST" | "PUT" | "PATCH" | "DELETE"> & {
  POST: StrictBodyMethod<"post">;
  PUT: StrictBodyMethod<"put">;
  PATCH: StrictBodyMethod<"patch">;
  DELETE: StrictBodyMethod<"delete">;
};

/** Options of {@link createApsClient}. */
export interface ApsClientOptions {
  /**
   * Where the API is: the origin (`http://localhost:8080`) or, as `APS_URL` gives it, the `/v1`
   * root (`http://localhost:8080/v1`). The document's paths carry `/v1` themselves, so a trailing
   * `/v1` (and `/`) is dropped.
   */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <token>`: an agent's API key, or the owner's APS_ADMIN_TOKEN. */
  token?: string;
  /** Headers on every request. */
  headers?: Record<string, string>;
  /** The fetch to use (tests, instrumentation); default the global one at the time of the call. */
  fetch?: (request: Request) => Promise<Response>;
}

/** The origin + path prefix the document's `/v1/...` paths are appended to. */
export function apiOrigin(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "");
}

/**
 * A typed client of one APS gateway (openapi-fetch over the generated `paths`). Every call
 * resolves to `{ data, error, response }`: `data` on a 2xx, `error` (an RFC 9457 problem) on a
 * 4xx/5xx; {@link unwrap} turns the latter into an {@link ApiError}.
 */
export function createApsClient(opts: ApsClientOptions): ApsClient {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  const client = createClient<paths, "application/json">({
    baseUrl: apiOrigin(opts.baseUrl),
    headers,
    // Late-bound, so a fetch installed after the client was made (instrumentation) is used.
    fetch: opts.fetch ?? ((request: Request) => globalThis.fetch(request)),
  });
  // the same object: ApsClient only narrows what a write's body may hold (NoUnknownFields)
  return client as unknown as ApsClient;
}
