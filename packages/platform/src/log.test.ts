import { createLogger } from "./log.js";

/**
 * The service logger's redaction (docs/design/operations.md#at-a-glance "Logs": never a key, a token or a body),
 * on lines captured from the real pino logger at debug level: keys and tokens under the usual
 * field names become "[redacted]" while the rest of the same line (request id, path) is kept.
 */
function capture(): { lines: () => Record<string, unknown>[]; text: () => string; write: (s: string) => void } {
  let out = "";
  return {
    write: (s: string) => void (out += s),
    text: () => out,
    lines: () =>
      out
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const KEY = "sk_src_7Hq2LxVfT0pZr9wKc3NbYd5M";
const TOKEN = "admin-token-9f8e7d6c5b4a";

describe("createLogger redaction", () => {
  it("redacts an Authorization header, an API key (both spellings) and a body, keeps the rest of the line", () => {
    const sink = capture();
    const log = createLogger("gateway", "debug", sink);
    log.debug(
      {
        requestId: "req-redaction-1",
        path: "/v1/me/keys/rotate",
        req: { headers: { authorization: `Bearer ${KEY}`, "user-agent": "curl" } },
        apiKey: KEY,
        answer: { apiKey: KEY, agentId: "ext_01" },
        engine: { api_key: TOKEN },
        body: `{"apiKey":"${KEY}"}`,
      },
      "rotated",
    );
    log.warn({ authorization: `Bearer ${TOKEN}`, requestId: "req-redaction-2" }, "answered 503");
    const text = sink.text();
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(KEY.slice("sk_src_".length));
    expect(text).not.toContain(TOKEN);
    const [first, second] = sink.lines();
    expect(first).toMatchObject({
      level: 20,
      service: "gateway",
      msg: "rotated",
      requestId: "req-redaction-1",
      path: "/v1/me/keys/rotate",
      req: { headers: { authorization: "[redacted]", "user-agent": "curl" } },
      apiKey: "[redacted]",
      answer: { apiKey: "[redacted]", agentId: "ext_01" },
      engine: { api_key: "[redacted]" },
      body: "[redacted]",
    });
    expect(second).toMatchObject({ authorization: "[redacted]", requestId: "req-redaction-2", msg: "answered 503" });
  });

  it("a logger without redaction would have written the key (the capture sees what pino writes)", () => {
    const sink = capture();
    const log = createLogger("gateway", "debug", sink);
    log.debug({ note: KEY }, "a field outside the redacted names");
    expect(sink.text()).toContain(KEY);
  });
});
