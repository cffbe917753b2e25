import { TO_639_3, type Lang } from "../langs.js";
import { EngineError, mapLimit, postJson, type TranslationEngine } from "./types.js";

/** Two-letter codes Apertium also uses in pair names (e.g. `fr-es` packages list `fra|spa`). */
const TWO: Record<Lang, string> = { zh: "zh", en: "en", ja: "ja", ko: "ko", es: "es", fr: "fr", de: "de", pt: "pt", ru: "ru", ar: "ar" };

/**
 * Apertium through its APY HTTP server (`apertium-apy`, Debian): `GET /listPairs` →
 * `{responseData: [{sourceLanguage, targetLanguage}]}` and `POST /translate` (form fields
 * `langpair=eng|spa`, `q`, `markUnknown=no`) → `{responseData: {translatedText}, responseStatus}`.
 * Pairs are read once from /listPairs (retried on the next call after a failure); a pair not
 * listed is `unsupported_pair`. Segments are sent one per request, four at a time.
 */
export class ApertiumEngine implements TranslationEngine {
  readonly name = "apertium";
  private pairs: Promise<Set<string>> | undefined;

  /** @param url APY base URL (`APERTIUM_URL`); @param timeoutMs per request (`TRANSLATION_TIMEOUT_MS`). */
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  private listPairs(): Promise<Set<string>> {
    this.pairs ??= (async () => {
      let res: Response;
      try {
        res = await fetch(new URL("listPairs", this.url.replace(/\/?$/, "/")), { signal: AbortSignal.timeout(this.timeoutMs) });
      } catch {
        throw new EngineError("unavailable", "Apertium APY is unreachable");
      }
      const body = (await res.json().catch(() => undefined)) as { responseData?: { sourceLanguage: string; targetLanguage: string }[] } | undefined;
      if (!res.ok || !Array.isArray(body?.responseData)) throw new EngineError("unavailable", `Apertium APY /listPairs answered ${res.status}`);
      return new Set(body.responseData.map((p) => `${p.sourceLanguage}|${p.targetLanguage}`));
    })().catch((err: unknown) => {
      this.pairs = undefined;
      throw err;
    });
    return this.pairs;
  }

  /** The APY langpair for `from → to`, or undefined when APY offers none. */
  async pairFor(from: Lang, to: Lang): Promise<string | undefined> {
    const pairs = await this.listPairs();
    for (const a of [TO_639_3[from], TWO[from]]) for (const b of [TO_639_3[to], TWO[to]]) if (pairs.has(`${a}|${b}`)) return `${a}|${b}`;
    return undefined;
  }

  async translate(texts: string[], from: Lang, to: Lang): Promise<string[]> {
    const langpair = await this.pairFor(from, to);
    if (!langpair) throw new EngineError("unsupported_pair", `Apertium offers no ${from} → ${to} pair here`);
    const endpoint = new URL("translate", this.url.replace(/\/?$/, "/")).toString();
    return mapLimit(texts, 4, async (q) => {
      const body = new URLSearchParams({ langpair, q, markUnknown: "no" }).toString();
      const { status, json } = await postJson(endpoint, { body, headers: { "content-type": "application/x-www-form-urlencoded" } }, this.timeoutMs);
      const r = json as { responseData?: { translatedText?: unknown }; responseStatus?: number; message?: string };
      if (status === 400) throw new EngineError("unsupported_pair", `Apertium: ${r.message ?? "pair not installed"}`);
      if (status !== 200 || typeof r.responseData?.translatedText !== "string") throw new EngineError("unavailable", `Apertium answered ${status}`);
      return r.responseData.translatedText;
    });
  }
}
