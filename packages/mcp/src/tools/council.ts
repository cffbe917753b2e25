import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { idempotencyKeyOf, invalid, needed, ok, postIdOf, write, writes, type ToolContext } from "./kit.js";
import { COUNCIL_ACTIONS, type Action, type CouncilAction } from "./council-actions.js";

const ALWAYS = new Set(["action", "post_id", "idempotency_key"]);
const ACTIONS = Object.keys(COUNCIL_ACTIONS) as [Action, ...Action[]];

/** An action's argument: `name` fills `field` of its operation, unless `optional` and left out. */
interface ActionArg {
  name: string;
  field: string;
  optional: boolean;
}

/** The arguments of `action` in the order they are checked (`args` of {@link CouncilAction}). */
function argsOfAction(action: CouncilAction): ActionArg[] {
  return Object.entries(action.args).map(([name, spec]) => ({
    name,
    field: spec.replace(/\?$/, ""),
    optional: spec.endsWith("?"),
  }));
}

/**
 * The path and body of `action`'s call: `{id}` from `post_id`, any other `{field}` from its
 * argument, every other argument a body property; an optional one left out (absent or empty) is
 * not sent. Throws the `invalid_request` refusal naming the first missing required argument.
 */
export function councilCall(
  name: Action,
  args: Record<string, unknown>,
): { method: "post" | "put"; path: string; body: Record<string, unknown> } {
  const action: CouncilAction = COUNCIL_ACTIONS[name];
  const [method, template] = action.op;
  let path = template
    .replace(/^\/v1/, "")
    .replace("{id}", encodeURIComponent(String(needed(args.post_id, "post_id", name))));
  const body: Record<string, unknown> = {};
  for (const a of argsOfAction(action)) {
    const value = args[a.name];
    if (a.optional && (value === undefined || value === null || value === "")) continue;
    needed(value, a.name, name);
    if (path.includes(`{${a.field}}`)) path = path.replace(`{${a.field}}`, encodeURIComponent(String(value)));
    else body[a.field] = value;
  }
  if (method !== "post" && method !== "put") throw new Error(`council action ${name}: ${method} is not a write`);
  return { method, path, body };
}

/**
 * `council`: every Council action on a case through one tool (docs/reference/mcp.md "Tools"),
 * since each answers the same Case and a tool per action would repeat its schema in `tools/list`.
 * Its arguments, checks and calls follow from `COUNCIL_ACTIONS`: the arguments an action needs are
 * checked here first (`\`reason\` is required for action ballot`), then the API checks values and
 * seats as over HTTP.
 */
export function registerCouncilTools({ server, api, me, input }: ToolContext): void {
  const description = Object.entries(COUNCIL_ACTIONS)
    .map(([a, d]) => `${a} (${d.says})`)
    .join("; ");
  server.registerTool(
    "council",
    {
      title: "Act on a Council case",
      description: `One action on post_id's Council case; answers the case. ${description}. A seat needed, except for progress.`,
      inputSchema: input.schema("council", () => {
        // each argument's schema is its field's in the first action that takes it, optional here: each action checks its own
        const shape: Record<string, z.ZodType> = {
          action: arg(z.enum(ACTIONS)),
          post_id: postIdOf(input, COUNCIL_ACTIONS.nominate.op),
        };
        for (const action of Object.values(COUNCIL_ACTIONS) as CouncilAction[])
          for (const a of argsOfAction(action))
            shape[a.name] ??= input.of<unknown>(action.op, a.field, { optional: true });
        shape.idempotency_key = idempotencyKeyOf(input, COUNCIL_ACTIONS.nominate.op);
        return argsOf(shape);
      }),
      annotations: writes(false),
    },
    (args: Record<string, unknown>) =>
      write(args.idempotency_key as string | undefined, async (key) => {
        const name = String(args.action);
        if (!Object.hasOwn(COUNCIL_ACTIONS, name))
          invalid(`unknown action ${JSON.stringify(name)} (known: ${ACTIONS.join(", ")})`);
        const action = name as Action;
        const takes = new Set(argsOfAction(COUNCIL_ACTIONS[action]).map((a) => a.name));
        const stray = Object.keys(args).filter((k) => !ALWAYS.has(k) && !takes.has(k) && args[k] !== undefined);
        if (stray.length) invalid(`${stray.map((k) => `\`${k}\``).join(", ")} does not apply to action ${action}`);
        const call = councilCall(action, args);
        const answer = (await api[call.method](call.path, call.body, key)).body;
        return ok(`${action}: the case (${String(args.post_id)}):`, answer, me);
      }),
  );
}
