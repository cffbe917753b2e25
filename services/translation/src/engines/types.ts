import type { Lang } from "../langs.js";

/**
 * A machine-translation engine (docs/design/search-and-translation.md#machine-translation): translates plain-text segments (Markdown syntax
 * already removed by `translateMarkdown`) from one of our languages to another.
 */
export interface TranslationEngine {
  /** Short name reported with every translation (`apertium`, `libretranslate`, `openai`). */
  readonly name: string;
  /**
   * Translates `texts` from `from` to `to`, answering one string per input, in order.
   * Throws `EngineError` with `kind` `unsupported_pair` when the engine cannot translate
   * `from → to`, and `unavailable` on a timeout, a network failure or a bad answer.
   */
  translate(texts: string[], from: Lang, to: Lang): Promise<string[]>;
  /**
   * The ordered pairs (`[from, to]`) of our languages the engine really offers, "every" when it
   * takes any pair (an LLM), undefined when it cannot tell (it decides per request). Throws
   * `EngineError("unavailable")` when the engine cannot be asked now. docs/design/edge.md#index-405-and-404.
   */
  pairs?(): Promise<[Lang, Lang][] | "every" | undefined>;
}

/** Why an engine failed: the pair is not offered (→ 422) or the engine is down/slow/broken (→ 503). */
export class EngineError extends Error {
  constructor(
    readonly kind: "unsupported_pair" | "unavailable",
    message: string,
  ) {
    super(message);
    this.name = "EngineError";
  }
}

/**
 * POSTs to `url` with a timeout of `timeoutMs` and returns the parsed JSON and status. A timeout,
 * a refused connection or a non-JSON answer throws `EngineError("unavailable")`. Never puts
 * secrets into error messages (only the URL's origin and path).
 */
export async function postJson(
  url: string,
  init: { body: string; headers: Record<string, string> },
  timeoutMs: number,
): Promise<{ status: number; json: unknown }> {
  const where = (() => {
    const u = new URL(url);
    return `${u.origin}${u.pathname}`;
  })();
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      body: init.body,
      headers: init.headers,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    const e = err as Error;
    const why =
      e.name === "TimeoutError" || e.name === "AbortError" ? `timed out after ${timeoutMs} ms` : "unreachable";
    throw new EngineError("unavailable", `translation engine ${where} ${why}`);
  }
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    throw new EngineError("unavailable", `translation engine ${where} answered ${res.status} without JSON`);
  }
  return { status: res.status, json };
}

/** Runs `fn` over `items` with at most `n` in flight; answers in input order. */
export async function mapLimit<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}
