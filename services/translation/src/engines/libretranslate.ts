import type { Lang } from "../langs.js";
import { EngineError, postJson, type TranslationEngine } from "./types.js";

/**
 * A LibreTranslate-compatible HTTP API (libretranslate.com docs, `POST /translate`): JSON request
 * `{q: string[], source, target, format: "text", api_key?}` → `{translatedText: string[]}`; an
 * error answers `{error: "..."}` with 400 (bad/unsupported language), 403 (bad key), 429
 * (slow down) or 500. 400 is `unsupported_pair`; everything else non-200 is `unavailable`.
 * Chinese is `zh` (LibreTranslate's code; newer versions also accept `zh-Hans`).
 */
export class LibreTranslateEngine implements TranslationEngine {
  readonly name = "libretranslate";

  /** @param url base URL (`LIBRETRANSLATE_URL`); @param apiKey `LIBRETRANSLATE_API_KEY` (sent in the body, never logged). */
  constructor(
    private readonly url: string,
    private readonly apiKey: string | undefined,
    private readonly timeoutMs: number,
  ) {}

  async translate(texts: string[], from: Lang, to: Lang): Promise<string[]> {
    const body = JSON.stringify({
      q: texts,
      source: from,
      target: to,
      format: "text",
      ...(this.apiKey ? { api_key: this.apiKey } : {}),
    });
    const endpoint = new URL("translate", this.url.replace(/\/?$/, "/")).toString();
    const { status, json } = await postJson(
      endpoint,
      { body, headers: { "content-type": "application/json", accept: "application/json" } },
      this.timeoutMs,
    );
    const r = json as { translatedText?: unknown; error?: unknown };
    if (status === 400)
      throw new EngineError(
        "unsupported_pair",
        `LibreTranslate refused ${from} → ${to}: ${typeof r.error === "string" ? r.error : "bad request"}`,
      );
    if (status !== 200) throw new EngineError("unavailable", `LibreTranslate answered ${status}`);
    const out = r.translatedText;
    if (!Array.isArray(out) || out.length !== texts.length || !out.every((t) => typeof t === "string")) {
      throw new EngineError("unavailable", "LibreTranslate answered an unexpected shape");
    }
    return out;
  }
}
