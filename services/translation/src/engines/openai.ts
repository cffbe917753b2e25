import type { Lang } from "../langs.js";
import { EngineError, mapLimit, postJson, type TranslationEngine } from "./types.js";

/** Most characters of segments per chat request. */
const CHUNK_CHARS = 4_000;

const NAMES: Record<Lang, string> = {
  zh: "Simplified Chinese",
  en: "English",
  ja: "Japanese",
  ko: "Korean",
  es: "Spanish",
  fr: "French",
  de: "German",
  pt: "Portuguese",
  ru: "Russian",
  ar: "Arabic",
};

/**
 * An OpenAI-compatible chat-completions API (`POST {OPENAI_BASE_URL}/chat/completions`, bearer
 * `OPENAI_API_KEY`): request `{model, messages: [{role: "system"|"user", content}], temperature: 0}`
 * → `{choices: [{message: {content}}]}`. The segments travel as one JSON array of strings and the
 * model must answer a JSON array of the same length (anything else is `unavailable`). Long
 * documents go in chunks of ≤ 4 000 characters (two requests at a time) so each answer stays well
 * inside a model's output limit. Every pair of our ten languages is offered.
 */
export class OpenAiEngine implements TranslationEngine {
  readonly name = "openai";

  constructor(
    private readonly baseUrl: string,
    private readonly apiKey: string | undefined,
    private readonly model: string,
    private readonly timeoutMs: number,
  ) {}

  /** An LLM takes every pair of our languages. */
  pairs(): Promise<"every"> {
    return Promise.resolve("every");
  }

  async translate(texts: string[], from: Lang, to: Lang): Promise<string[]> {
    const chunks: string[][] = [];
    let size = 0;
    for (const t of texts) {
      if (chunks.length === 0 || size + t.length > CHUNK_CHARS) {
        chunks.push([]);
        size = 0;
      }
      chunks[chunks.length - 1]!.push(t);
      size += t.length;
    }
    return (await mapLimit(chunks, 2, (c) => this.translateChunk(c, from, to))).flat();
  }

  private async translateChunk(texts: string[], from: Lang, to: Lang): Promise<string[]> {
    const system =
      `You translate from ${NAMES[from]} to ${NAMES[to]}. The user sends a JSON array of text segments. ` +
      "Answer with only a JSON array of strings of the same length: the translation of each segment, in order. " +
      "Keep punctuation, numbers and spacing at the edges; add nothing.";
    const body = JSON.stringify({
      model: this.model,
      temperature: 0,
      messages: [
        { role: "system", content: system },
        { role: "user", content: JSON.stringify(texts) },
      ],
    });
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const endpoint = `${this.baseUrl.replace(/\/+$/, "")}/chat/completions`;
    const { status, json } = await postJson(endpoint, { body, headers }, this.timeoutMs);
    if (status !== 200) throw new EngineError("unavailable", `chat completions answered ${status}`);
    const content = (json as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
    if (typeof content !== "string")
      throw new EngineError("unavailable", "chat completions answered no message content");
    let out: unknown;
    try {
      out = JSON.parse(content.trim().replace(/^```(?:json)?\s*|\s*```$/g, ""));
    } catch {
      throw new EngineError("unavailable", "the model did not answer a JSON array");
    }
    if (!Array.isArray(out) || out.length !== texts.length || !out.every((t) => typeof t === "string")) {
      throw new EngineError("unavailable", "the model answered a different number of segments");
    }
    return out;
  }
}
