// The search bench's corpus (docs/design/search-and-translation.md#duplicate-check): posts generated from the PEP dataset's text, varied
// deterministically from a seed, so any post can be rebuilt from its index alone (the bench's text
// source regenerates bodies for the page of results instead of keeping them).
import { readFileSync } from "node:fs";
import { seededRandom } from "@aps/testkit";

/** The PEPs as `{ title, text }` (abstract + text), from the JSON-lines dataset at `path`. */
export function loadPeps(path) {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((p) => ({ title: p.title, text: `${p.abstract ?? ""}\n\n${p.text ?? ""}` }));
}

/** Id of the bench's post number `i`. */
export const benchPostId = (i) => `p_bench${String(i).padStart(7, "0")}`;
/** Number of a bench post id. */
export const benchPostIndex = (id) => Number(id.slice("p_bench".length));

/**
 * Post number `i` of the corpus: the title of one PEP (seeded pick) with one word of another PEP's
 * title inserted, and a body of 500–2500 characters cut from the first PEP's text at a seeded
 * offset followed by ~300 characters of the second's. Same `(peps, i, seed)` → same post.
 */
export function postAt(peps, i, seed) {
  const rnd = seededRandom((seed ^ Math.imul(i + 1, 0x9e3779b1)) >>> 0);
  const a = peps[Math.floor(rnd() * peps.length)];
  const b = peps[Math.floor(rnd() * peps.length)];
  const words = a.title.split(/\s+/);
  const other = b.title.split(/\s+/);
  words.splice(Math.floor(rnd() * (words.length + 1)), 0, other[Math.floor(rnd() * other.length)]);
  const len = 500 + Math.floor(rnd() * 2000);
  const at = Math.floor(rnd() * Math.max(1, a.text.length - len));
  const bAt = Math.floor(rnd() * Math.max(1, b.text.length - 300));
  return {
    id: benchPostId(i),
    kind: "post",
    title: words.join(" ").slice(0, 200),
    body: `${a.text.slice(at, at + len)}\n\n${b.text.slice(bAt, bAt + 300)}`,
    url: `/v1/posts/${benchPostId(i)}`,
    tags: ["post", rnd() < 0.7 ? "arch" : "free", "open"],
  };
}
