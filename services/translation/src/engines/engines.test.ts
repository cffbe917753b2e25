import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { translateMarkdown } from "../markdown.js";
import { EngineError } from "./types.js";
import { LibreTranslateEngine } from "./libretranslate.js";
import { OpenAiEngine } from "./openai.js";

/**
 * The HTTP engines against local stub servers speaking their public wire formats:
 * - LibreTranslate `POST /translate` (docs.libretranslate.com "API usage"): JSON
 *   `{q, source, target, format, api_key}`, `q` a string or an array → `{translatedText}` of the
 *   same shape; errors `{error}` with 400 / 403 / 429 / 500.
 * - OpenAI chat completions `POST /v1/chat/completions` (platform.openai.com API reference):
 *   `Authorization: Bearer <key>`, `{model, messages: [{role, content}], ...}` →
 *   `{id, object: "chat.completion", choices: [{index, message: {role: "assistant", content}, finish_reason}], usage}`.
 * Each stub records the request it received; the tests assert its shape.
 */
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: any;
}

async function stub(handle: (seen: Seen, res: ServerResponse) => unknown) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const s: Seen = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: raw ? JSON.parse(raw) : undefined,
      };
      seen.push(s);
      void handle(s, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const json = (res: ServerResponse, status: number, body: unknown): void =>
  void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
/** The stub's "translation": a recognisable transform of each segment. */
const fakeEs = (s: string) => `ES(${s})`;

describe("LibreTranslate engine (stub server)", () => {
  it("sends {q: [...], source, target, format: text, api_key} to POST /translate and maps translatedText back in order", async () => {
    const s = await stub((seen, res) => json(res, 200, { translatedText: (seen.body.q as string[]).map(fakeEs) }));
    try {
      const e = new LibreTranslateEngine(`${s.url}/`, "lt-secret", 2_000);
      const out = await translateMarkdown("Hello **world**, see `code` and [docs](https://x.y/z).", (t) =>
        e.translate(t, "en", "es"),
      );
      // Link text is translated in its sentence; the destination and the code are not sent.
      expect(out).toBe("ES(Hello) **ES(world)**ES(, see) `code` ES(and [docs)](https://x.y/z).");
      expect(s.seen).toHaveLength(1);
      const r = s.seen[0]!;
      expect(r.method).toBe("POST");
      expect(r.url).toBe("/translate");
      expect(r.headers["content-type"]).toMatch(/^application\/json/);
      expect(r.body).toEqual({
        q: ["Hello", "world", ", see", "and [docs"],
        source: "en",
        target: "es",
        format: "text",
        api_key: "lt-secret",
      });
    } finally {
      await s.close();
    }
  });

  it("omits api_key when none is configured", async () => {
    const s = await stub((seen, res) => json(res, 200, { translatedText: (seen.body.q as string[]).map(fakeEs) }));
    try {
      await new LibreTranslateEngine(s.url, undefined, 2_000).translate(["Hi there"], "en", "de");
      expect(s.seen[0]!.body).toEqual({ q: ["Hi there"], source: "en", target: "de", format: "text" });
    } finally {
      await s.close();
    }
  });

  it("400 {error} → unsupported_pair; 403/500/bad shape → unavailable; a slow server → unavailable after the timeout; the key never appears in errors", async () => {
    let mode = "400";
    const s = await stub(async (_seen, res) => {
      if (mode === "400") return json(res, 400, { error: "ko is not supported" });
      if (mode === "403") return json(res, 403, { error: "Invalid API key" });
      if (mode === "500") return json(res, 500, { error: "boom" });
      if (mode === "shape") return json(res, 200, { translatedText: "one string for two" });
      await slowAnswer; // answers only after the engine's timeout has fired (released at the end)
      json(res, 200, { translatedText: ["late"] });
    });
    let release = (): void => undefined;
    const slowAnswer = new Promise<void>((r) => (release = r));
    try {
      // 2 s: long enough for the stub's immediate answers on a loaded 2-core machine; the slow
      // mode never answers within it, whatever the load
      const e = new LibreTranslateEngine(s.url, "lt-secret", 2_000);
      const fail = (texts = ["a b", "c d"]) =>
        e.translate(texts, "en", "ko").then(
          () => undefined,
          (err: unknown) => err as EngineError,
        );
      expect((await fail())?.kind).toBe("unsupported_pair");
      for (const m of ["403", "500", "shape", "slow"]) {
        mode = m;
        const err = await fail();
        expect(err).toBeInstanceOf(EngineError);
        expect(err?.kind).toBe("unavailable");
        expect(err?.message).not.toContain("lt-secret");
      }
    } finally {
      release();
      await s.close();
    }
  });

  it("an unreachable server → unavailable", async () => {
    const s = await stub((_seen, res) => json(res, 200, {}));
    await s.close();
    await expect(
      new LibreTranslateEngine(s.url, undefined, 1_000).translate(["x y"], "en", "es"),
    ).rejects.toMatchObject({ kind: "unavailable" });
  });
});

describe("OpenAI-compatible engine (stub server)", () => {
  it("POSTs {model, messages: [system, user], temperature: 0} with a bearer key to {base}/chat/completions and parses choices[0].message.content", async () => {
    const s = await stub((seen, res) => {
      const segments = JSON.parse(seen.body.messages[1].content) as string[];
      json(res, 200, {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1_700_000_000,
        model: seen.body.model,
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: JSON.stringify(segments.map(fakeEs)) },
            finish_reason: "stop",
          },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      });
    });
    try {
      const e = new OpenAiEngine(`${s.url}/v1/`, "sk-test-secret", "qwen2.5-7b-instruct", 2_000);
      const out = await translateMarkdown("# Title\n\nSome text with `code`.\n\n```\nkeep me\n```\n", (t) =>
        e.translate(t, "en", "ja"),
      );
      expect(out).toBe("# ES(Title)\n\nES(Some text with) `code`.\n\n```\nkeep me\n```\n");
      const r = s.seen[0]!;
      expect(r.method).toBe("POST");
      expect(r.url).toBe("/v1/chat/completions");
      expect(r.headers.authorization).toBe("Bearer sk-test-secret");
      expect(r.headers["content-type"]).toMatch(/^application\/json/);
      expect(r.body.model).toBe("qwen2.5-7b-instruct");
      expect(r.body.temperature).toBe(0);
      expect(r.body.messages.map((m: { role: string }) => m.role)).toEqual(["system", "user"]);
      expect(r.body.messages[0].content).toMatch(/English to Japanese/);
      expect(JSON.parse(r.body.messages[1].content)).toEqual(["Title", "Some text with"]);
    } finally {
      await s.close();
    }
  });

  it("a long document goes in several requests of at most ~4 000 characters, answers joined in order", async () => {
    const s = await stub((seen, res) => {
      const segments = JSON.parse(seen.body.messages[1].content) as string[];
      json(res, 200, {
        choices: [{ index: 0, message: { role: "assistant", content: JSON.stringify(segments.map(fakeEs)) } }],
      });
    });
    try {
      const texts = Array.from({ length: 30 }, (_, i) => `Paragraph ${i} `.padEnd(500, "x"));
      const out = await new OpenAiEngine(s.url, undefined, "m", 2_000).translate(texts, "en", "es");
      expect(out).toEqual(texts.map(fakeEs));
      expect(s.seen.length).toBeGreaterThanOrEqual(4);
      for (const r of s.seen)
        expect((JSON.parse(r.body.messages[1].content) as string[]).join("").length).toBeLessThanOrEqual(4_500);
    } finally {
      await s.close();
    }
  });

  it("a fenced JSON answer is accepted; prose, a wrong count, no choices or HTTP 429/500 → unavailable", async () => {
    let content: unknown = '```json\n["uno"]\n```';
    let status = 200;
    const s = await stub((_seen, res) =>
      json(
        res,
        status,
        status === 200
          ? { choices: content === undefined ? [] : [{ index: 0, message: { role: "assistant", content } }] }
          : { error: { message: "rate limited", type: "requests" } },
      ),
    );
    try {
      const e = new OpenAiEngine(s.url, undefined, "m", 2_000);
      expect(await e.translate(["one"], "en", "es")).toEqual(["uno"]);
      expect(s.seen[0]!.headers.authorization).toBeUndefined();
      for (const [c, st] of [
        ["Sure! Here is the translation: uno", 200],
        ['["uno", "dos"]', 200],
        [undefined, 200],
        ['["uno"]', 429],
        ['["uno"]', 500],
      ] as const) {
        content = c;
        status = st;
        await expect(e.translate(["one"], "en", "es")).rejects.toMatchObject({ kind: "unavailable" });
      }
    } finally {
      await s.close();
    }
  });
});
