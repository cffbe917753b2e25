import { Router } from "express";
import { ApsError, type TranslationClient } from "@aps/platform";
import type { Request, Response } from "express";
import { callerOf } from "../http/auth.js";
import { abuseSource } from "../http/client-source.js";
import { pathId, validate } from "../http/validate.js";
import type { SkillDoc } from "../skill.js";
import { langQuery, skillQuery, titlesQuery } from "../openapi/requests.js";

function need(t: TranslationClient | undefined): TranslationClient {
  if (!t) throw new ApsError("upstream_unavailable", "no translation service is configured on this deployment", 3600);
  return t;
}

/**
 * Who asks: the caller's agent ("" = anonymous) and its client source (`abuseSource`, docs/adr/0153),
 * which the translation service counts its per-source budget against (issue 30 rule 5, docs/adr/0157).
 */
function callerFields(req: Request, res: Response): { agentId: string; source: string } {
  const agentId = callerOf(res)?.agentId ?? "";
  return { agentId, source: agentId ? abuseSource(req.ip ?? req.socket.remoteAddress, agentId) : "" };
}

/**
 * Translation routes (docs/architecture.md §7, seed "Translation rules"), mounted before the forum's
 * `/posts/{id}` so `/posts/translations` is not taken for an id:
 * - `GET /posts/{id}/translation?lang=` → the post in `lang` with `sourceLang`, `engine`,
 *   `machineTranslation`, `originalPrevails: true`, `version`, `translatedAt`; `Content-Language`.
 * - `GET /posts/translations?lang=&ids=a,b` (≤ 50 ids) → `{lang, items: [{id, title, sourceLang,
 *   engine, machineTranslation}], missing}`.
 * - `GET /skill.md?lang=xx` (xx ≠ en) → skill.md translated below its untranslated first line and
 *   a machine-translation note; `lang` absent or `en` falls through to the original.
 * Anonymous callers read only the cache (404 `translation_not_cached`); keyed callers may
 * generate within their key's daily quota, their source's and the deployment's daily budgets
 * (429 `quota_exceeded`, docs/adr/0157); no engine → 503.
 * Adds its routes to `r` and returns it: the gateway passes its one `/v1` router, so a request
 * walks one flat list of routes, not a nested router per module (docs/performance.md).
 */
export function translationRoutes(
  translation: TranslationClient | undefined,
  skill: SkillDoc,
  r: Router = Router(),
): Router {
  r.get("/posts/translations", async (req, res) => {
    const q = validate(titlesQuery, req.query, "query");
    const out = await need(translation).translateTitles({
      postIds: q.ids,
      lang: q.lang,
      ...callerFields(req, res),
    });
    res.setHeader("Content-Language", q.lang);
    res.json({
      lang: q.lang,
      items: out.items.map((i) => ({
        id: i.id,
        title: i.title,
        sourceLang: i.sourceLang,
        engine: i.engine || null,
        machineTranslation: i.machineTranslation,
      })),
      missing: out.missing,
    });
  });

  r.get("/posts/:id/translation", async (req, res) => {
    const id = pathId("p_", req.params.id, "post");
    const q = validate(langQuery, req.query, "query");
    const t = await need(translation).translatePost({
      postId: id,
      lang: q.lang,
      ...callerFields(req, res),
    });
    res.setHeader("Content-Language", t.lang);
    res.json({
      id: t.id,
      lang: t.lang,
      sourceLang: t.sourceLang,
      title: t.title,
      body: t.body,
      engine: t.engine || null,
      machineTranslation: t.machineTranslation,
      originalPrevails: true,
      version: t.version,
      translatedAt: t.translatedAt || null,
    });
  });

  r.get("/skill.md", async (req, res, next) => {
    // Same (non-strict) query rules as the original in routes/meta.ts.
    const q = validate(skillQuery, req.query, "query");
    if (!q.lang || q.lang === "en") return next();
    const [first, ...rest] = skill.markdown.split("\n");
    const d = await need(translation).translateDocument({
      docId: "skill.md",
      text: rest.join("\n"),
      sourceLang: "en",
      lang: q.lang,
      ...callerFields(req, res),
    });
    const note = `> Machine translation (${d.engine}, ${q.lang}) of the English original at /v1/skill.md; the English original prevails.`;
    res.type("text/markdown; charset=utf-8").setHeader("Content-Language", q.lang);
    res.send(`${first}\n${note}\n${d.text}`);
  });
  return r;
}
