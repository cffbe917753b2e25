import { Feed } from "feed";

/** One entry of an Atom feed (RFC 4287 §4.1.2), before escaping: every text is participants' own. */
export interface AtomEntry {
  /** The post's id: the entry's `<id>` and `<link>` are `<base>/posts/<postId>`. */
  postId: string;
  /** The post's title (plain text). */
  title: string;
  /** The author's display name (plain text). */
  author: string;
  /** The excerpt shown as `<summary>` (plain text, at most 500 code points as the lists give it). */
  summary: string;
  /** When the entry last changed as this feed reports it, UTC. */
  updated: Date;
  /** When the post was created, UTC. */
  published: Date;
}

/** What names a feed: its `<title>`, its own URL (`rel="self"`) and the web page it mirrors (`rel="alternate"`). */
export interface AtomFeed {
  title: string;
  subtitle: string;
  /** The feed's URL, absolute: its `<id>` and its `rel="self"` link. */
  self: string;
  /** The web page it mirrors, absolute (`rel="alternate"`). */
  page: string;
}

/** XML 1.0 forbids these code points even escaped (§2.2 Char): C0 controls but tab, LF, CR; lone surrogates; U+FFFE/U+FFFF. */
const NOT_XML_CHAR =
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` as the HTML that displays it literally, with what XML cannot carry removed. The `feed`
 * library writes titles and summaries as `type="html"` in CDATA: escaped, a participant's `<b>`
 * or `<script>` is shown as text by a feed reader, never run, and `]]>` cannot end the CDATA early.
 */
export function htmlText(text: string): string {
  return text
    .replace(NOT_XML_CHAR, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
}

/** The feed's `<updated>` when it has no entry: a fixed instant, so an empty feed keeps its ETag. */
const EMPTY_UPDATED = new Date(0);

/**
 * An Atom 1.0 document (RFC 4287) of `entries`, newest first as given, written by the `feed`
 * library (docs/design/agents.md#atom-feeds). The feed's `<updated>` is its newest entry's, so
 * equal content gives equal bytes (and the same strong ETag) in every gateway replica. `base` is
 * the public origin without a trailing slash (`https://aps.example`).
 */
export function atomFeed(base: string, feed: AtomFeed, entries: readonly AtomEntry[]): string {
  const updated = entries.reduce<Date>((max, e) => (e.updated > max ? e.updated : max), EMPTY_UPDATED);
  const f = new Feed({
    id: feed.self,
    title: feed.title,
    description: feed.subtitle,
    link: feed.page,
    feedLinks: { atom: feed.self },
    updated,
    generator: "APS",
    author: { name: "APS", link: base },
  });
  for (const e of entries) {
    const url = `${base}/posts/${encodeURIComponent(e.postId)}`;
    f.addItem({
      id: url,
      link: url,
      title: htmlText(e.title),
      description: htmlText(e.summary),
      author: [{ name: e.author.replace(NOT_XML_CHAR, "") }],
      date: e.updated,
      published: e.published,
    });
  }
  return f.atom1();
}
