import { LANGS, TO_639_3, type Lang } from "../langs.js";
import { EngineError, mapLimit, postJson, type TranslationEngine } from "./types.js";

/** Two-letter codes Apertium also uses in pair names (e.g. `fr-es` packages list `fra|spa`). */
const TWO: Record<Lang, string> = {
  zh: "zh",
  en: "en",
  ja: "ja",
  ko: "ko",
  es: "es",
  fr: "fr",
  de: "de",
  pt: "pt",
  ru: "ru",
  ar: "ar",
};

/**
 * Apertium through its APY HTTP server (`apertium-apy`, Debian): `GET /listPairs` →
 * `{responseData: [{sourceLanguage, targetLanguage}]}` and `POST /translate` (form fields
 * `langpair=eng|spa`, `q`, `markUnknown=no`) → `{responseData: {translatedText}, responseStatus}`.
 * Pairs are read once from /listPairs (retried on the next call after a failure); a pair not
 * listed is `unsupported_pair`. Segments travel HTML-escaped in batches of ≤ 6 000 characters
 * joined by `<hr>` (APY's default HTML deformatter keeps tags in place), four requests at a time;
 * a batch whose separators do not survive is re-sent one segment per request.
 */
export class ApertiumEngine implements TranslationEngine {
  readonly name = "apertium";
  private pairSet: Promise<Set<string>> | undefined;

  /** @param url APY base URL (`APERTIUM_URL`); @param timeoutMs per request (`TRANSLATION_TIMEOUT_MS`). */
  constructor(
    private readonly url: string,
    private readonly timeoutMs: number,
  ) {}

  private listPairs(): Promise<Set<string>> {
    this.pairSet ??= (async () => {
      let res: Response;
      try {
        res = await fetch(new URL("listPairs", this.url.replace(/\/?$/, "/")), {
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch {
        throw new EngineError("unavailable", "Apertium APY is unreachable");
      }
      const body = (await res.json().catch(() => undefined)) as
        { responseData?: { sourceLanguage: string; targetLanguage: string }[] } | undefined;
      if (!res.ok || !Array.isArray(body?.responseData))
        throw new EngineError("unavailable", `Apertium APY /listPairs answered ${res.status}`);
      return new Set(body.responseData.map((p) => `${p.sourceLanguage}|${p.targetLanguage}`));
    })().catch((err: unknown) => {
      this.pairSet = undefined;
      throw err;
    });
    return this.pairSet;
  }

  /** The APY langpair for `from → to`, or undefined when APY offers none. */
  async pairFor(from: Lang, to: Lang): Promise<string | undefined> {
    const pairs = await this.listPairs();
    for (const a of [TO_639_3[from], TWO[from]])
      for (const b of [TO_639_3[to], TWO[to]]) if (pairs.has(`${a}|${b}`)) return `${a}|${b}`;
    return undefined;
  }

  /** The pairs of our languages `translate` accepts: those APY's /listPairs offers (`pairFor`). */
  async pairs(): Promise<[Lang, Lang][]> {
    const out: [Lang, Lang][] = [];
    for (const a of LANGS) for (const b of LANGS) if (a !== b && (await this.pairFor(a, b))) out.push([a, b]);
    return out;
  }

  async translate(texts: string[], from: Lang, to: Lang): Promise<string[]> {
    const langpair = await this.pairFor(from, to);
    if (!langpair) throw new EngineError("unsupported_pair", `Apertium offers no ${from} → ${to} pair here`);
    const batches: string[][] = [];
    let size = 0;
    for (const t of texts) {
      if (batches.length === 0 || size + t.length > BATCH_CHARS) {
        batches.push([]);
        size = 0;
      }
      batches[batches.length - 1]!.push(t);
      size += t.length;
    }
    const done = await mapLimit(batches, 4, async (batch) => {
      const joined = await this.request(langpair, batch.map(escapeHtml).join(SEPARATOR));
      const parts = joined.split(SEPARATOR);
      // A separator lost or added by the pipeline: fall back to one request per segment.
      if (parts.length !== batch.length) return mapLimit(batch, 4, async (t) => this.request(langpair, escapeHtml(t)));
      return parts;
    });
    return done.flat().map((out, i) => cleanMarks(texts[i]!, unescapeHtml(out)));
  }

  /** One APY `/translate` request (HTML deformatter, APY's default): the translated text. */
  private async request(langpair: string, q: string): Promise<string> {
    const endpoint = new URL("translate", this.url.replace(/\/?$/, "/")).toString();
    const body = new URLSearchParams({ langpair, q, markUnknown: "no" }).toString();
    const { status, json } = await postJson(
      endpoint,
      { body, headers: { "content-type": "application/x-www-form-urlencoded" } },
      this.timeoutMs,
    );
    const r = json as { responseData?: { translatedText?: unknown }; explanation?: string };
    if (status === 400) throw new EngineError("unsupported_pair", `Apertium: ${r.explanation ?? "pair not installed"}`);
    if (status !== 200 || typeof r.responseData?.translatedText !== "string")
      throw new EngineError("unavailable", `Apertium answered ${status}`);
    return r.responseData.translatedText;
  }
}

/** Segments per request are joined by an HTML tag: APY's default HTML deformatter keeps tags in place. */
const SEPARATOR = "<hr>";
/** Most characters of prose per APY request. */
const BATCH_CHARS = 6_000;

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const unescapeHtml = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");

/**
 * Apertium marks words it could not generate with `#` and transfer problems with `@` (unknown
 * words `*` are already off with markUnknown=no): such a mark that the source segment did not
 * contain is removed so it cannot turn into Markdown syntax (`#` heading, `*` emphasis).
 */
function cleanMarks(source: string, out: string): string {
  let s = out;
  for (const mark of ["#", "@", "*"]) if (!source.includes(mark)) s = s.split(mark).join("");
  return s;
}
