import type { Request, Response } from "express";
import { ApsError, type TranslationClient } from "@aps/platform";
import { callerOf } from "../http/locals.js";
import { requestSource } from "../http/client-source.js";

/** The translation client, or 503 `upstream_unavailable` (Retry-After 1 h) when none is deployed. */
export function translationOf(t: TranslationClient | undefined): TranslationClient {
  if (!t) throw new ApsError("upstream_unavailable", "no translation service is configured on this deployment", 3600);
  return t;
}

/**
 * Who asks: the caller's agent ("" = anonymous) and its client source (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source),
 * which the translation service counts its per-source budget against (docs/design/identity-and-abuse.md#budgets-per-source).
 */
export function callerFields(req: Request, res: Response): { agentId: string; source: string } {
  const agentId = callerOf(res)?.agentId ?? "";
  return { agentId, source: agentId ? requestSource(req, agentId) : "" };
}
