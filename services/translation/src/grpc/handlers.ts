import { z } from "zod";
import { parseRequest, unary, type Logger } from "@aps/platform";
import type { translation } from "@aps/proto";
import { LANGS } from "../langs.js";
import type { TranslatedPost, Translator } from "../translator.js";

const postId = z.string().regex(/^p_[0-9A-HJKMNP-TV-Z]{26}$/, "a post id is p_ + ULID");
const agentId = z.string().max(64);
/** The client's source as the gateway sends it (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source: ≤ 64 characters), "" = none. */
const source = z.string().max(128);
const lang = z.enum(LANGS);
const postReq = z.object({ postId, lang, agentId, source });
const titlesReq = z.object({ postIds: z.array(postId).min(1).max(50), lang, agentId, source });
const docReq = z.object({
  docId: z.string().regex(/^[a-z0-9._-]{1,64}$/),
  text: z.string().min(1).max(1_000_000),
  sourceLang: lang,
  lang,
  agentId,
  source,
});
const quotaReq = z.object({ agentId: z.string().min(1).max(64) });

function toPost(t: TranslatedPost): translation.PostTranslation {
  return {
    id: t.id,
    lang: t.lang,
    sourceLang: t.sourceLang,
    title: t.title,
    body: t.body,
    engine: t.engine ?? "",
    machineTranslation: t.machineTranslation,
    version: t.version,
    translatedAt: t.translatedAt ?? "",
  };
}

/** gRPC handlers of aps.translation.v1.TranslationService; every request is re-validated here. */
export function translationHandlers(tr: Translator, log: Logger): translation.TranslationServiceServer {
  return {
    translatePost: unary(log, async (req: translation.TranslatePostRequest) => {
      const r = parseRequest(postReq, req);
      return toPost(await tr.post(r.postId, r.lang, { agentId: r.agentId, source: r.source }));
    }),
    translateTitles: unary(log, async (req: translation.TranslateTitlesRequest) => {
      const r = parseRequest(titlesReq, req);
      const out = await tr.titles(r.postIds, r.lang, { agentId: r.agentId, source: r.source });
      return {
        lang: r.lang,
        items: out.items.map((t) => ({
          id: t.id,
          title: t.title,
          sourceLang: t.sourceLang,
          engine: t.engine ?? "",
          machineTranslation: t.machineTranslation,
        })),
        missing: out.missing,
      };
    }),
    translateDocument: unary(log, async (req: translation.TranslateDocumentRequest) => {
      const r = parseRequest(docReq, req);
      const d = await tr.document(r.docId, r.text, r.sourceLang, r.lang, { agentId: r.agentId, source: r.source });
      return {
        docId: r.docId,
        lang: r.lang,
        sourceLang: r.sourceLang,
        text: d.text,
        engine: d.engine ?? "",
        version: d.version,
        translatedAt: d.translatedAt ?? "",
      };
    }),
    getQuota: unary(log, async (req: translation.GetQuotaRequest) => tr.quota(parseRequest(quotaReq, req).agentId)),
    listPairs: unary(log, async (): Promise<translation.ListPairsResponse> => {
      const p = await tr.pairs();
      return {
        engine: tr.engineName ?? "",
        everyPair: p === "every",
        pairs: Array.isArray(p) ? p : [],
        known: p !== undefined,
      };
    }),
  };
}
