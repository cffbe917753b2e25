import { Router } from "express";
import type { TranslationClient } from "@aps/platform";
import { validate } from "../http/validate.js";
import type { SkillDoc } from "../skill.js";
import { skillQuery } from "../openapi/requests.js";
import { callerFields, translationOf } from "../api/translation/need.js";

/**
 * `GET /skill.md?lang=xx` (xx ≠ en, docs/architecture.md §7): skill.md translated below its
 * untranslated first line and a machine-translation note; `lang` absent or `en` falls through to
 * the original (api/meta/get-skill.ts). Anonymous callers read only the cache (404
 * `translation_not_cached`); keyed callers may generate within their budgets (429,
 * docs/adr/0157); no engine → 503. The posts' translations are declared in api/translation/.
 * Adds its route to `r` and returns it.
 */
export function translationRoutes(
  translation: TranslationClient | undefined,
  skill: SkillDoc,
  r: Router = Router(),
): Router {
  r.get("/skill.md", async (req, res, next) => {
    // Same (non-strict) query rules as the original in api/meta/get-skill.ts.
    const q = validate(skillQuery, req.query, "query");
    if (!q.lang || q.lang === "en") return next();
    const [first, ...rest] = skill.markdown.split("\n");
    const d = await translationOf(translation).translateDocument({
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
