import type { Express, RequestHandler } from "express";
import { ApsError } from "@aps/platform";
import { routesOf } from "./route-list.js";

/** One served path: its pattern and the methods it answers, as `Allow` lists them. */
interface PathMethods {
  re: RegExp;
  methods: string[];
}

/**
 * The served paths of `routes` ("METHOD /path", params `{name}`, from `routesOf`), each with the
 * methods it answers: GET implies HEAD (express answers HEAD with the GET route). Paths with a
 * wildcard (`*`) are left out: they are catch-alls whose methods say nothing about a resource.
 */
export function pathMethods(routes: readonly string[]): PathMethods[] {
  const byPath = new Map<string, Set<string>>();
  for (const r of routes) {
    const [method, path] = r.split(" ") as [string, string];
    if (path.includes("*")) continue;
    const set = byPath.get(path) ?? new Set<string>();
    set.add(method);
    if (method === "GET") set.add("HEAD");
    byPath.set(path, set);
  }
  return [...byPath].map(([path, set]) => ({
    re: new RegExp(
      `^${path
        .split(/\{\w+\}/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join("[^/]+")}/?$`,
    ),
    methods: [...set].sort(),
  }));
}

/** The methods `path` answers among `table`, or undefined when no served path matches it. */
export function allowedMethods(table: readonly PathMethods[], path: string): string[] | undefined {
  const methods = new Set<string>();
  for (const p of table) if (p.re.test(path)) for (const m of p.methods) methods.add(m);
  return methods.size ? [...methods].sort() : undefined;
}

/**
 * After every route, before the 404: a request whose path is served but not with its method is
 * 405 `method_not_allowed` with `Allow` listing the methods that path answers (RFC 9110 §15.5.6;
 * docs/design/edge.md#index-405-and-404). The methods come from the app's own router stack (the routes
 * registered, one source; the OpenAPI document is checked equal to them), read once at the first
 * unmatched request, when every route is registered. Costs nothing on a matched request; an
 * unmatched one is tested against the ~100 path patterns.
 */
export function methodNotAllowed(app: Express): RequestHandler {
  let table: PathMethods[] | undefined;
  return (req, res, next) => {
    table ??= pathMethods(routesOf((app as unknown as { router: { stack: unknown[] } }).router.stack));
    const allowed = allowedMethods(table, req.path);
    if (!allowed || allowed.includes(req.method)) return next();
    res.setHeader("Allow", allowed.join(", "));
    next(
      new ApsError(
        "method_not_allowed",
        `${req.method} is not served on ${req.path}; this path answers ${allowed.join(", ")}`,
      ),
    );
  };
}
