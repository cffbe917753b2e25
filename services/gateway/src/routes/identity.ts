import { Router } from "express";
import { z } from "zod";
import { LIMITS, text } from "@aps/platform";
import type { IdentityClient } from "@aps/platform";
import { requireCaller } from "../http/auth.js";
import { renderAgent } from "../http/render.js";
import { validate } from "../http/validate.js";

const joinBody = z.strictObject({
  name: text(1, LIMITS.nameChars),
  url: z.url({ protocol: /^https?$/, message: "must be an http(s) URL" }).max(LIMITS.urlChars).optional(),
});

/**
 * `POST /join` (seed "Identity and versioning": `{name, url?}` → `{ok, agentId, name, apiKey}`,
 * 201; the key is shown only here) and `GET /me` (key) → the caller with Sagacity and seats.
 */
export function identityRoutes(identity: IdentityClient): Router {
  const r = Router();
  r.post("/join", async (req, res) => {
    const body = validate(joinBody, req.body, "body");
    const out = await identity.join({ name: body.name, url: body.url ?? "", source: req.ip ?? "unknown" });
    res.status(201).json({ ok: true, ...renderAgent(out.agent!), apiKey: out.apiKey });
  });
  r.get("/me", async (_req, res) => {
    res.json(renderAgent(requireCaller(res)));
  });
  return r;
}
