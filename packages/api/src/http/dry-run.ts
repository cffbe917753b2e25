import type { Request, RequestHandler, Response } from "express";
import { ApsError, runAsDryRun } from "@aps/platform";

/**
 * Dry runs of writes (docs/design/edge.md#dry-run): `?dryRun=true` on any write operation runs it
 * whole — validation, limits, authorization, the services' SQL — and answers what the write
 * would answer, with `Aps-Dry-Run: true`, while nothing is stored, published or spent: every
 * service call carries the dry-run mark (platform db/dry-run.ts) and rolls back what it wrote.
 * The request itself is counted by the per-minute request limits, as any request is.
 */

/** The query parameter that asks for a dry run. */
export const DRY_RUN_PARAMETER = "dryRun";

/** The answer header of a dry run: its value is `true`. */
export const DRY_RUN_HEADER = "Aps-Dry-Run";

/** The answer header of a dry run that names what the write would also do (docs/design/edge.md#dry-run). */
export const DRY_RUN_EFFECTS_HEADER = "Aps-Dry-Run-Effects";

/**
 * The predicted effects of a dry run beside its answer (docs/design/edge.md#dry-run): `agenda`, a vote that
 * would move the post onto the agenda; `posts-remaining` and `comments-remaining`, what today's
 * limit would leave after the write.
 */
export interface DryRunEffects {
  agenda?: boolean;
  "posts-remaining"?: number;
  "comments-remaining"?: number;
}

/**
 * Sets `Aps-Dry-Run-Effects` on a dry run's answer: a Structured Fields dictionary (RFC 9651 §3.2)
 * of `effects`, booleans as `?1`/`?0`, integers as they are. Nothing on a request that is not a dry run.
 */
export function setDryRunEffects(res: Response, effects: DryRunEffects): void {
  if (!isDryRun(res)) return;
  const members = Object.entries(effects)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => (typeof v === "boolean" ? `${k}=?${v ? 1 : 0}` : `${k}=${Math.max(0, Math.trunc(v as number))}`));
  if (members.length) res.setHeader(DRY_RUN_EFFECTS_HEADER, members.join(", "));
}

/** `res.locals` key: true on a dry run. */
const DRY_RUN_LOCAL = "dryRun";

/** Whether this request is a dry run (set by {@link dryRunMiddleware}). */
export function isDryRun(res: Response): boolean {
  return res.locals[DRY_RUN_LOCAL] === true;
}

/**
 * The request's `dryRun` parameter: true for `true`, false for `false` or none.
 * @throws ApsError `invalid_request` (400) for any other value or a repeated parameter.
 */
export function dryRunRequested(req: Request): boolean {
  const v: unknown = (req.query as Record<string, unknown>)[DRY_RUN_PARAMETER];
  if (v === undefined || v === "false") return false;
  if (v === "true") return true;
  throw new ApsError(
    "invalid_request",
    `query parameter \`${DRY_RUN_PARAMETER}\` must be true or false (a dry run answers what the write would, and keeps nothing)`,
  );
}

/** The request's query without `dryRun`, for a write route's own query schema. */
export function withoutDryRun(query: unknown): unknown {
  if (typeof query !== "object" || query === null || !(DRY_RUN_PARAMETER in query)) return query;
  const rest: Record<string, unknown> = { ...(query as Record<string, unknown>) };
  delete rest[DRY_RUN_PARAMETER];
  return rest;
}

/**
 * A write route's first middleware after authentication: on `?dryRun=true`, marks the answer
 * (`Aps-Dry-Run: true`) and runs the rest of the request — the idempotency middleware, which
 * keeps nothing of it, and the handler — as a dry run that ends when the answer has been sent.
 * A bad value is 400 before anything runs.
 */
export const dryRunMiddleware: RequestHandler = (req, res, next) => {
  let on: boolean;
  try {
    on = dryRunRequested(req);
  } catch (err) {
    next(err);
    return;
  }
  if (!on) {
    next();
    return;
  }
  res.locals[DRY_RUN_LOCAL] = true;
  res.setHeader(DRY_RUN_HEADER, "true");
  void runAsDryRun(
    () =>
      new Promise<void>((resolve) => {
        res.once("close", resolve);
        next();
      }),
  );
};
