import { detectLang } from "./langs.js";
import { segment, translateMarkdown } from "./markdown.js";

const DOC = [
  "# Add a managed Redis",
  "",
  "We **need** a cache. See [the docs](https://example.com/redis?a=1&b=(2)) and <https://redis.io>.",
  "Call `redis-cli PING` first, or read https://example.com/raw_url_here.",
  "",
  "```python",
  "def hello(name):",
  '    return f"Hello {name}"  # not prose',
  "```",
  "",
  "- item one with _emphasis_ and snake_case_name",
  "> quoted words",
  "",
  "| col a | col b |",
  "|---|---|",
  "| left | right |",
  "",
  "    indented code stays",
  "    as it is",
  "",
  "~~~",
  "unterminated tilde fence is kept to the end",
].join("\n");

/** A fake engine that upper-cases: enough to see what was sent and what was kept. */
const upper = async (texts: string[]) => texts.map((t) => t.toUpperCase());

describe("Markdown protection (structure survives translation, docs/design/search-and-translation.md#machine-translation)", () => {
  it("segments join back to the exact input", () => {
    expect(
      segment(DOC)
        .map((s) => s.value)
        .join(""),
    ).toBe(DOC);
    expect(
      segment("")
        .map((s) => s.value)
        .join(""),
    ).toBe("");
  });

  it("never sends code, URLs, link destinations or Markdown markers to the engine", async () => {
    const sent: string[] = [];
    const out = await translateMarkdown(DOC, async (t) => (sent.push(...t), upper(t)));
    const all = sent.join("\n");
    for (const kept of [
      "def hello",
      "redis-cli",
      "https://",
      "redis.io",
      "indented code",
      "unterminated tilde",
      "```",
      "|",
      "**",
      "# ",
      "> ",
      "- ",
    ]) {
      expect(all).not.toContain(kept);
    }
    // Code blocks, inline code and URLs are byte-identical; prose was translated (upper-cased).
    expect(out).toContain('```python\ndef hello(name):\n    return f"Hello {name}"  # not prose\n```');
    expect(out).toContain("`redis-cli PING`");
    expect(out).toContain("](https://example.com/redis?a=1&b=(2))");
    expect(out).toContain("<https://redis.io>");
    expect(out).toContain("https://example.com/raw_url_here");
    expect(out).toContain("    indented code stays\n    as it is");
    expect(out).toContain("~~~\nunterminated tilde fence is kept to the end");
    expect(out).toContain("# ADD A MANAGED REDIS");
    expect(out).toContain("WE **NEED** A CACHE");
    expect(out).toContain("[THE DOCS]");
    expect(out).toContain("| COL A | COL B |\n|---|---|");
    expect(out).toContain("_EMPHASIS_");
    expect(out).toContain("> QUOTED WORDS");
  });

  it("rejects an engine answer with a different number of segments", async () => {
    await expect(translateMarkdown("one. `x` two.", async (t) => t.slice(1))).rejects.toThrow(/segments/);
  });
});

describe("detectLang (franc-min, restricted to our ten languages)", () => {
  it.each([
    ["en", "The platform should offer a managed message queue with at-least-once delivery and dead letters."],
    ["es", "La plataforma debería ofrecer una cola de mensajes gestionada con entrega al menos una vez."],
    ["fr", "La plateforme devrait proposer une file de messages gérée avec une livraison au moins une fois."],
    [
      "de",
      "Die Plattform sollte eine verwaltete Nachrichtenwarteschlange mit mindestens einmaliger Zustellung anbieten.",
    ],
    ["zh", "平台应该提供一个托管的消息队列，并保证至少一次的消息投递。"],
    ["ru", "Платформа должна предлагать управляемую очередь сообщений с доставкой хотя бы один раз."],
  ])("%s", (want, text) => {
    expect(detectLang(text)).toBe(want);
  });

  it("falls back on short text and ignores code", () => {
    expect(detectLang("ok")).toBe("en");
    expect(detectLang("ok", "ja")).toBe("ja");
    expect(
      detectLang(
        "La plataforma debería ofrecer una cola de mensajes gestionada.\n\n```\nthe quick brown fox jumps over the lazy dog and more english words\n```",
      ),
    ).toBe("es");
  });
});
