import { skillQuery } from "../openapi/requests.js";
import { getSkill } from "../meta/get-skill.js";
import { defineRoute } from "../route.js";
import { callerFields, translationOf } from "./need.js";

/**
 * `GET /skill.md?lang=xx` (xx ≠ en, docs/design/search-and-translation.md#machine-translation): skill.md translated below its
 * untranslated first line and a machine-translation note. The operation is `getSkill`'s (one
 * entry in the document, `continues`): its handler, which runs no authentication, answers `lang`
 * absent or `en` and passes any other `lang` on (`next`) to this one, mounted after it, which
 * authenticates a presented key (the caller known).
 * Anonymous callers read only the cache (404 `translation_not_cached`); keyed callers may generate
 * within their budgets (429, docs/design/identity-and-abuse.md#budgets-per-source); no engine → 503.
 */
export const translateSkill = defineRoute({
  ...getSkill.operation,
  continues: getSkill,
  access: "optional",
  query: skillQuery,
  async handle({ query: q, req, res, next }, { translation, skill }) {
    if (!q.lang || q.lang === "en") {
      next();
      return undefined;
    }
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
    return undefined;
  },
});
