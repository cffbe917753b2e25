/**
 * Every route of an express 5 app as "METHOD /path" (params written `{name}`, as in OpenAPI),
 * read from its router stack: `routesOf(app.router.stack)`. Used by the tests that keep skill.md
 * and the OpenAPI document in step with the routes.
 */
export function routesOf(stack: unknown[], prefix = ""): string[] {
  const out: string[] = [];
  for (const l of stack as {
    route?: { path: string; methods: Record<string, boolean> };
    handle?: { stack?: unknown[] };
    rawPath?: string | string[];
  }[]) {
    if (l.route) {
      const joined = prefix + l.route.path;
      // `/v1` + "/" is the index `/v1` (express matches both; the document names it `/v1`).
      const path = (joined.length > 1 && joined.endsWith("/") ? joined.slice(0, -1) : joined).replace(
        /:(\w+)/g,
        "{$1}",
      );
      for (const [method, on] of Object.entries(l.route.methods))
        if (on && method !== "_all") out.push(`${method.toUpperCase()} ${path}`);
    } else if (l.handle?.stack) {
      const raw = typeof l.rawPath === "string" ? l.rawPath : "/";
      out.push(...routesOf(l.handle.stack, prefix + (raw === "/" ? "" : raw)));
    }
  }
  return out;
}
