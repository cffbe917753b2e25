import { Router } from "express";
import type { SkillDoc } from "../skill.js";
import { validate } from "../http/validate.js";
import { skillQuery } from "../openapi/requests.js";

/**
 * `GET /skill-version` → `{"version": N}` and `GET /skill.md` (text/markdown, first line
 * `SKILL_VERSION: N`; `?lang=` other than `en` falls through to routes/translation.ts). Every response also carries `X-Skill-Version` (set in app.ts).
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function metaRoutes(skill: SkillDoc, r: Router = Router()): Router {
  r.get("/skill-version", (_req, res) => {
    res.json({ version: skill.version });
  });
  r.get("/skill.md", (req, res, next) => {
    const q = validate(skillQuery, req.query, "query");
    // Another language is served by the translation routes (routes/translation.ts).
    if (q.lang && q.lang !== "en") return next();
    res.type("text/markdown; charset=utf-8").setHeader("Content-Language", "en");
    res.send(skill.markdown);
  });
  return r;
}
