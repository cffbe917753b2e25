import { z } from "zod";

/**
 * A tool argument as the client sees it and as the server checks it (docs/design/agents.md#mcp-results): `tools/list`
 * shows the argument's full JSON Schema (`schema`: type, bounds, enum, pattern, description), but
 * the SDK lets any value through, so the APS API validates it and its message — "`vote`: must be
 * 1 or -1", "`title` is required" (docs/design/edge.md#index-405-and-404) — is what the agent reads, not the SDK's
 * "Invalid input". Required when `schema` refuses `undefined`. Typed as `schema` for the handler,
 * which hands the value on to the API as it came (String() where it builds a path or header).
 */
export function arg<T extends z.ZodType>(schema: T): T {
  const json = z.toJSONSchema(schema, { io: "input", target: "draft-7", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  delete json.$schema;
  const loose = z.any().optional().meta(json);
  if (!schema.safeParse(undefined).success) REQUIRED.add(loose);
  return loose as unknown as T;
}

/** The loose schemas of required arguments ({@link arg}, inputs.ts); {@link argsOf} lists them as `required`. */
export const REQUIRED = new WeakSet<z.ZodType>();

/**
 * A tool's input schema from its {@link arg}s: an object whose JSON Schema lists the required
 * ones (the SDK sees every argument as optional, so a missing one reaches the API, which names it:
 * "`title` is required").
 */
export function argsOf<S extends Record<string, z.ZodType>>(shape: S): z.ZodObject<S> {
  const required = Object.entries(shape)
    .filter(([, s]) => REQUIRED.has(s))
    .map(([k]) => k);
  // unknown keys are kept, so unknownArguments can name them
  return z
    .object(shape)
    .catchall(z.any())
    .meta({ ...(required.length ? { required } : {}), additionalProperties: false });
}

/**
 * An API problem's detail with the HTTP names turned into this tool's argument names: the API
 * names request fields in camelCase (`parentId`) and query parameters as "query parameter
 * `limit`"; MCP arguments are the same words in snake_case (`parent_id`, docs/design/edge.md#index-405-and-404).
 */
export function argumentNames(detail: string): string {
  return detail
    .replace(/query parameter `/g, "`")
    .replace(
      /`([a-z]+(?:[A-Z][a-z0-9]*)+)`/g,
      (_m, name: string) => `\`${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}\``,
    );
}

/** A name without case, `_` or `-`: `parentId` and `parent_id` are the same words. */
const words = (s: string) => s.toLowerCase().replace(/[_-]/g, "");

/**
 * The message for arguments a tool does not have, or undefined when all are known — in the API's
 * words for unknown fields (docs/design/edge.md#index-405-and-404): 'unknown argument "parentId": arguments are
 * snake_case, send `parent_id`', or 'unknown argument "x" (known: a, b)'. The SDK would drop
 * them silently; an agent that misspells an argument should learn it (docs/design/agents.md#mcp-results).
 */
export function unknownArguments(schema: z.ZodObject, args: Record<string, unknown> | undefined): string | undefined {
  const known = Object.keys(schema.shape);
  const extra = Object.keys(args ?? {}).filter((k) => !known.includes(k));
  if (extra.length === 0) return undefined;
  return extra
    .map((k) => {
      const same = known.find((n) => words(n) === words(k));
      return same
        ? `unknown argument "${k}": arguments are snake_case, send \`${same}\``
        : `unknown argument "${k}" (known: ${known.join(", ") || "none"})`;
    })
    .join("; ");
}
