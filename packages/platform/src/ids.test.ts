import { waitUntil } from "@aps/testkit";
import { decodeTime } from "ulidx";
import { newId } from "./ids.js";

/** newId: prefixed ULIDs, strictly increasing within the process, random part from the pooled CSPRNG. */
describe("newId", () => {
  it("makes 20,000 distinct, strictly increasing, well-formed ids across several pool refills", () => {
    const ids = Array.from({ length: 20_000 }, () => newId("p_"));
    for (const id of ids) expect(id).toMatch(/^p_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });

  it("draws every base32 symbol about equally often in the random part of fresh milliseconds", async () => {
    // The first id of a millisecond carries 16 fresh random characters (later ones increment).
    const counts = new Map<string, number>();
    let n = 0;
    // the millisecond of each id, starting with the latest of the ids made so far
    const times = [decodeTime(newId(""))];
    for (let ms = 0; ms < 400; ms++) {
      const last = times.at(-1)!;
      await waitUntil("a millisecond without an id yet", () => Date.now() > last, { timeoutMs: 5_000, intervalMs: 1 });
      const id = newId("");
      times.push(decodeTime(id));
      for (const ch of id.slice(10)) {
        counts.set(ch, (counts.get(ch) ?? 0) + 1);
        n++;
      }
    }
    // each id was the first of its millisecond: its random part is fresh, not an increment
    expect(times.every((t, i) => i === 0 || t > times[i - 1]!)).toBe(true);
    expect(counts.size).toBe(32);
    const expected = n / 32;
    // Chi-squared with 31 degrees of freedom; 70 is far beyond the 99.99th percentile (≈ 67).
    const chi2 = [...counts.values()].reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    expect(chi2).toBeLessThan(70);
  });
});
