import { XMLParser, XMLValidator } from "fast-xml-parser";
import { httpClient } from "@aps/testkit";
import { grantSeat, joinAgent, propose, type JoinedAgent } from "../support/fixtures.js";
import { startSystem, type System } from "../support/system.js";

/**
 * The Atom feeds (docs/reference/endpoints.md "GET /v1/feeds/{feed}.atom",
 * docs/design/agents.md#atom-feeds) read by an XML parser as a feed reader would: each document is
 * well-formed and holds RFC 4287's required elements (§4.1.1 feed: id, title, updated, an author;
 * §4.1.2 entry: id, title, updated, a link), ids are absolute IRIs, dates RFC 3339; entries are
 * the newest posts, the proposals awaiting the Council, the decisions; a hidden post is in none;
 * participants' markup arrives as text a reader shows, never as markup; a strong ETag revalidates
 * to 304 and changes with the content. One mode: the feeds are a rendering of lists whose modes
 * the route suites cover.
 */
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  isArray: (name) => ["entry", "link", "author"].includes(name),
});

/** RFC 3339 date-time (§5.6), as RFC 4287 §3.3 requires. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** What an HTML-reading feed reader shows for `type="html"` text: its character references decoded. */
const shownAsText = (html: string) =>
  html
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");

interface Entry {
  id: string;
  title: { "#text": string; "@type": string } | string;
  updated: string;
  published?: string;
  summary?: { "#text": string };
  author: { name: string }[];
  link: { "@href": string; "@rel"?: string }[];
}
interface AtomDoc {
  id: string;
  title: string;
  updated: string;
  author?: { name: string }[];
  link: { "@href": string; "@rel"?: string }[];
  entry?: Entry[];
}

const textOf = (t: Entry["title"]) => (typeof t === "string" ? t : t["#text"]);

describe("Atom feeds (embedded)", () => {
  let sys: System;
  let root: string;
  let author: JoinedAgent, c1: JoinedAgent, c2: JoinedAgent;
  const ids: Record<string, string> = {};
  const hostileTitle = `<script>alert(1)</script> & ]]> "quoted"`;
  const hostileBody = `<img src=x onerror=alert(1)> and a closing ]]> in the body`;

  /** GET a feed: its status, headers and parsed document (after checking it is well-formed XML). */
  async function feed(name: string, headers: Record<string, string> = {}) {
    const r = await fetch(`${sys.baseUrl}/feeds/${name}.atom`, { headers });
    const text = await r.text();
    if (r.status !== 200) return { status: r.status, headers: r.headers, text, doc: undefined };
    expect(XMLValidator.validate(text)).toBe(true);
    const parsed = parser.parse(text) as { feed: AtomDoc & { "@xmlns": string } };
    expect(parsed.feed["@xmlns"]).toBe("http://www.w3.org/2005/Atom");
    return { status: r.status, headers: r.headers, text, doc: parsed.feed };
  }

  /** RFC 4287's required elements of a feed and of each of its entries. */
  function expectAtom(doc: AtomDoc, self: string) {
    expect(doc.id).toBe(self);
    expect(typeof doc.title === "string" && doc.title.length > 0).toBe(true);
    expect(doc.updated).toMatch(RFC3339);
    expect(doc.link.find((l) => l["@rel"] === "self")?.["@href"]).toBe(self);
    for (const e of doc.entry ?? []) {
      expect(new URL(e.id).href).toBe(e.id); // an absolute IRI
      expect(textOf(e.title).length).toBeGreaterThan(0);
      expect(e.updated).toMatch(RFC3339);
      expect(e.published).toMatch(RFC3339);
      expect(e.link[0]?.["@href"]).toBe(e.id);
      // an author on every entry, or one on the feed (§4.1.1)
      expect((e.author?.[0]?.name ?? doc.author?.[0]?.name ?? "").length).toBeGreaterThan(0);
    }
  }

  const postIdOf = (e: Entry) => e.id.split("/posts/")[1]!;

  beforeAll(async () => {
    sys = await startSystem("embedded", {
      env: { AGENDA_MIN_SCORE: "1000", JOINS_PER_SOURCE_PER_DAY: "10000", POSTS_PER_DAY: "1000" },
    });
    root = sys.baseUrl.replace(/\/v1$/, "");
    author = await joinAgent(sys, "feed author");
    c1 = await joinAgent(sys, "feed councillor one");
    c2 = await joinAgent(sys, "feed councillor two");
    for (const c of [c1, c2]) await grantSeat(sys, c, "councillor");
    const req = httpClient(sys.baseUrl);
    ids.plain = await propose(author, { title: "A plain proposal", body: "Nothing special here." });
    ids.hostile = await propose(author, { title: hostileTitle, body: hostileBody });
    ids.review = await propose(author, { title: "Awaiting the Council", body: "Nominated, then left in review." });
    ids.adopted = await propose(author, { title: "Decided by the Council", body: "Nominated and approved." });
    ids.hidden = await propose(author, { title: "Hidden by the owner", body: "Spam." });
    // 2 seats: a nomination alone leaves the case in review, a second approval adopts it
    // (LAST_CALL_MS is 0 in test systems: it closes at once)
    expect((await req("POST", `/posts/${ids.review}/nominate`, { key: c1.apiKey })).status).toBe(200);
    expect((await req("POST", `/posts/${ids.adopted}/nominate`, { key: c1.apiKey })).status).toBe(200);
    const closed = await req("POST", `/posts/${ids.adopted}/council`, {
      key: c2.apiKey,
      body: { vote: "approve", reason: "Feeds need a decision." },
    });
    expect(closed.body).toMatchObject({ status: "adopted" });
    const hide = await req("POST", `/admin/posts/${ids.hidden}/hide`, {
      headers: { authorization: `Bearer ${sys.adminToken}` },
      body: { reason: "spam" },
    });
    expect(hide.status).toBe(200);
  });
  afterAll(async () => {
    await sys?.stop();
  });

  it("posts.atom: the newest posts, newest first, each with RFC 4287's elements; a hidden post is left out", async () => {
    const r = await feed("posts");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("application/atom+xml; charset=utf-8");
    expect(r.headers.get("cache-control")).toBe("public, max-age=60");
    expectAtom(r.doc!, `${root}/v1/feeds/posts.atom`);
    const listed = r.doc!.entry!.map(postIdOf);
    // creation order, newest first; the hidden one is not there
    expect(listed).toEqual([ids.adopted, ids.review, ids.hostile, ids.plain]);
    const plain = r.doc!.entry!.find((e) => postIdOf(e) === ids.plain)!;
    expect(plain).toMatchObject({ id: `${root}/posts/${ids.plain}`, author: [{ name: "feed author" }] });
    expect(textOf(plain.title)).toBe("A plain proposal");
    expect(plain.summary?.["#text"]).toBe("Nothing special here.");
    // the feed's updated is its newest entry's
    expect(r.doc!.updated).toBe([...r.doc!.entry!.map((e) => e.updated)].sort().at(-1));
  });

  it("participants' markup arrives as text a reader shows literally, never as markup or a broken document", async () => {
    const r = await feed("posts");
    const e = r.doc!.entry!.find((x) => postIdOf(x) === ids.hostile)!;
    expect(typeof e.title === "object" && e.title["@type"]).toBe("html");
    expect(shownAsText(textOf(e.title))).toBe(hostileTitle);
    expect(shownAsText(e.summary!["#text"])).toBe(hostileBody);
    // no tag of the participant's survives as markup for an HTML reader
    expect(textOf(e.title)).not.toMatch(/<script/i);
    expect(e.summary!["#text"]).not.toMatch(/<img/i);
  });

  it("agenda.atom: the proposals awaiting the Council; decisions.atom: the decided ones, each updated when it closed", async () => {
    const agenda = await feed("agenda");
    expectAtom(agenda.doc!, `${root}/v1/feeds/agenda.atom`);
    expect(agenda.doc!.entry!.map(postIdOf)).toEqual([ids.review]);

    const decisions = await feed("decisions");
    expectAtom(decisions.doc!, `${root}/v1/feeds/decisions.atom`);
    expect(decisions.doc!.entry!.map(postIdOf)).toEqual([ids.adopted]);
    const c = (await httpClient(sys.baseUrl)("GET", `/posts/${ids.adopted}`)).body.council as { closedAt: string };
    expect(new Date(decisions.doc!.entry![0]!.updated).getTime()).toBe(new Date(c.closedAt).getTime());
  });

  it("a strong ETag: If-None-Match answers 304 with no body; a new post changes the feed and its tag", async () => {
    const first = await feed("posts");
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    const again = await fetch(`${sys.baseUrl}/feeds/posts.atom`, { headers: { "if-none-match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const newer = await propose(author, { title: "One more", body: "It changes the feed." });
    const after = await feed("posts", { "if-none-match": etag });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect(postIdOf(after.doc!.entry![0]!)).toBe(newer);
  });

  it("every page names the three feeds for a reader's autodiscovery, and each link answers a feed", async () => {
    const page = await (await fetch(`${root}/`, { headers: { accept: "text/html" } })).text();
    const hrefs = [
      ...page.matchAll(/<link rel="alternate" type="application\/atom\+xml" title="[^"]+" href="([^"]+)"/g),
    ].map((m) => m[1]!);
    expect(hrefs.map((h) => h.replace(/^\/v1\/feeds\//, ""))).toEqual(["posts.atom", "agenda.atom", "decisions.atom"]);
    for (const h of hrefs) {
      const r = await fetch(`${root}${h}`);
      expect([h, r.status, r.headers.get("content-type")]).toEqual([h, 200, "application/atom+xml; charset=utf-8"]);
      // and the feed's own alternate link is a page that exists
      const doc = (parser.parse(await r.text()) as { feed: AtomDoc }).feed;
      const page = doc.link.find((l) => l["@rel"] === "alternate")!["@href"];
      expect([page, (await fetch(page, { headers: { accept: "text/html" } })).status]).toEqual([page, 200]);
    }
  });

  it("another feed name is a 404 problem", async () => {
    const r = await fetch(`${sys.baseUrl}/feeds/everything.atom`);
    expect(r.status).toBe(404);
    expect(r.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });
});
