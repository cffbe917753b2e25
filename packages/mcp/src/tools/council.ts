import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { idempotencyKeyOf, invalid, needed, ok, postIdOf, postPath, write, writes, type ToolContext } from "./kit.js";
import { COUNCIL_ACTIONS, COUNCIL_OPS, type Action } from "./council-actions.js";

/** The arguments each action takes besides action, post_id and idempotency_key. */
const USES: Record<Action, readonly string[]> = {
  nominate: [],
  ballot: ["vote", "reason"],
  concern: ["reason"],
  resolve_concern: ["concern_id", "note"],
  decision: ["statement", "review_at"],
  handoff: ["implementation", "executor"],
  progress: ["percent", "note"],
  complete: [],
  duplicate: ["of"],
};
const ALWAYS = new Set(["action", "post_id", "idempotency_key"]);

/**
 * `council`: every Council action on a case through one tool (docs/reference/mcp.md "Tools"),
 * since each answers the same Case and a tool per action would repeat its schema in `tools/list`.
 * The arguments an action needs are checked here first (`\`reason\` is required for action
 * ballot`), then the API checks values and seats as over HTTP.
 */
export function registerCouncilTools({ server, api, me, input }: ToolContext): void {
  /** An action's argument: optional here, each action checks its own ({@link USES}). */
  const opt = { optional: true };
  const description = Object.entries(COUNCIL_ACTIONS)
    .map(([a, d]) => `${a} (${d})`)
    .join("; ");
  server.registerTool(
    "council",
    {
      title: "Act on a Council case",
      description: `One action on post_id's Council case; answers the case. ${description}. A seat needed, except for progress.`,
      inputSchema: input.schema("council", () =>
        argsOf({
          action: arg(z.enum(Object.keys(COUNCIL_ACTIONS) as [Action, ...Action[]])),
          post_id: postIdOf(input, COUNCIL_OPS.nominate),
          vote: input.of(COUNCIL_OPS.ballot, "vote", opt),
          reason: input.of(COUNCIL_OPS.ballot, "reason", opt),
          concern_id: input.of(COUNCIL_OPS.resolve_concern, "cid", opt),
          note: input.of(COUNCIL_OPS.resolve_concern, "note", opt),
          statement: input.of(COUNCIL_OPS.decision, "statement", opt),
          review_at: input.of(COUNCIL_OPS.decision, "reviewAt", opt),
          implementation: input.of(COUNCIL_OPS.handoff, "implementation", opt),
          executor: input.of(COUNCIL_OPS.handoff, "executor", opt),
          percent: input.of<number | undefined>(COUNCIL_OPS.progress, "percent", opt),
          of: input.of(COUNCIL_OPS.duplicate, "of", opt),
          idempotency_key: idempotencyKeyOf(input, COUNCIL_OPS.nominate),
        }),
      ),
      annotations: writes(false),
    },
    (args) =>
      write(args.idempotency_key, async (key) => {
        const action = String(args.action) as Action;
        if (!Object.hasOwn(USES, action))
          invalid(`unknown action ${JSON.stringify(action)} (known: ${Object.keys(COUNCIL_ACTIONS).join(", ")})`);
        const stray = Object.keys(args).filter(
          (k) => !ALWAYS.has(k) && !USES[action].includes(k) && args[k as keyof typeof args] !== undefined,
        );
        if (stray.length) invalid(`${stray.map((k) => `\`${k}\``).join(", ")} does not apply to action ${action}`);
        const req = <T>(name: string, v: T | undefined) => needed(v, name, action);
        const id = req("post_id", args.post_id);
        const post = async (tail: string, body: unknown) => (await api.post(postPath(id, tail), body, key)).body;
        let answer: unknown;
        switch (action) {
          case "nominate":
            answer = await post("/nominate", {});
            break;
          case "ballot":
            answer = await post("/council", { vote: req("vote", args.vote), reason: req("reason", args.reason) });
            break;
          case "concern":
            answer = await post("/concerns", { reason: req("reason", args.reason) });
            break;
          case "resolve_concern": {
            const cid = encodeURIComponent(String(req("concern_id", args.concern_id)));
            answer = await post(`/concerns/${cid}/resolve`, { note: req("note", args.note) });
            break;
          }
          case "decision": {
            const body = {
              statement: req("statement", args.statement),
              ...(args.review_at ? { reviewAt: args.review_at } : {}),
            };
            answer = (await api.put(postPath(id, "/decision"), body, key)).body;
            break;
          }
          case "handoff": {
            const implementation = req("implementation", args.implementation);
            answer = await post(
              "/handoff",
              args.executor === undefined ? { implementation } : { implementation, executor: args.executor },
            );
            break;
          }
          case "progress":
            answer = await post("/progress", { percent: req("percent", args.percent), note: req("note", args.note) });
            break;
          case "complete":
            answer = await post("/complete", {});
            break;
          case "duplicate":
            answer = await post("/duplicate", { of: req("of", args.of) });
            break;
          default:
            return invalid(
              `unknown action ${JSON.stringify(action)} (known: ${Object.keys(COUNCIL_ACTIONS).join(", ")})`,
            );
        }
        return ok(`${action}: the case (${id}):`, answer, me);
      }),
  );
}
