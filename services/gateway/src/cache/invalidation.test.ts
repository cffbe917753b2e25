import { createLogger, EVENT_TYPES, type BusEvent, type EventBus, type EventType } from "@aps/platform";
import type { Request, Response } from "express";
import { waitUntil } from "@aps/testkit";
import { AuthCache } from "./auth-cache.js";
import { applyEvent, subscribeInvalidation } from "./invalidation.js";
import { ReadCache } from "./read-cache.js";

/**
 * Which events drop the gateway's cached lists and which only mark them stale (docs/design/edge.md#cache-invalidation-by-events):
 * a vote seen as an event — the most frequent one — is served stale while one refresh runs;
 * a new post (or any other change that may add, remove or reorder posts) drops the lists at once.
 * The events are real catalogue messages, encoded as the services publish them.
 */
function event(type: EventType, fields: Record<string, unknown>): BusEvent {
  const codec = EVENT_TYPES[type] as unknown as {
    fromPartial(o: unknown): unknown;
    encode(m: unknown): { finish(): Uint8Array };
  };
  return {
    subject: `aps.${type}`,
    eventId: "01TEST",
    payload: codec.encode(codec.fromPartial(fields)).finish(),
    headers: {},
  };
}

/** A GET through the cache with a minimal request/response pair; resolves the body it sent. */
async function get(cache: ReadCache, version: { n: number }, produced: { n: number }): Promise<number> {
  let sent = "";
  const req = { headers: {}, header: () => undefined, get: () => undefined } as unknown as Request;
  const res = {
    setHeader: () => res,
    status: () => res,
    end: () => undefined,
    send: (b: Buffer) => void (sent = b.toString("utf8")),
  } as unknown as Response;
  await cache.serve(req, res, "/posts?sort=hot", { kind: "collection" }, async () => {
    produced.n++;
    return { v: version.n };
  });
  return (JSON.parse(sent) as { v: number }).v;
}

describe("applyEvent: a vote revalidates the lists, other post events drop them (docs/design/edge.md#cache-invalidation-by-events)", () => {
  const auth = new AuthCache(
    {
      resolve: async () => {
        throw new Error("not used");
      },
    } as never,
    { ttlMs: 0, maxEntries: 0 },
  );

  it("forum.vote_cast: the cached list is served once more while it is refreshed", async () => {
    const cache = new ReadCache({ ttlMs: 60_000, maxBytes: 1 << 20 });
    const version = { n: 0 };
    const produced = { n: 0 };
    expect(await get(cache, version, produced)).toBe(0);
    const stored = cache.stats.bytes;
    // the next version's body is one byte longer ({"v":10}): its refresh, once stored, shows in the cache's bytes
    version.n = 10;
    expect(applyEvent("aps", event("forum.vote_cast", { postId: "p_1", vote: 1, votesFor: 1 }), cache, auth)).toBe(
      "post",
    );
    expect(await get(cache, version, produced)).toBe(0);
    await waitUntil("the refreshed list to be stored", () => cache.stats.bytes === stored + 1, { timeoutMs: 10_000 });
    expect(await get(cache, version, produced)).toBe(10);
    expect(produced.n).toBe(2);
  });

  it("forum.post_created: the cached list is produced again before answering", async () => {
    const cache = new ReadCache({ ttlMs: 60_000, maxBytes: 1 << 20 });
    const version = { n: 0 };
    const produced = { n: 0 };
    expect(await get(cache, version, produced)).toBe(0);
    version.n++;
    expect(applyEvent("aps", event("forum.post_created", { postId: "p_2" }), cache, auth)).toBe("post");
    expect(await get(cache, version, produced)).toBe(1);
  });
});

describe("the authentication cache follows identity's events and the bus's gaps (docs/design/edge.md#authentication-cache)", () => {
  /** An AuthCache over a resolver that counts its calls and knows two agents' keys. */
  function counted() {
    const calls = { n: 0 };
    const agents: Record<string, string> = { key_a: "ag_a", key_b: "ag_b" };
    const cache = new AuthCache(
      {
        authenticate: async (apiKey: string) => {
          calls.n++;
          return { agentId: agents[apiKey]! } as never;
        },
      },
      { ttlMs: 60_000, maxEntries: 100 },
    );
    return { cache, calls };
  }

  it("identity.seat_changed drops that agent's cached keys, and only that agent's", async () => {
    const { cache, calls } = counted();
    await cache.authenticate("key_a");
    await cache.authenticate("key_b");
    expect(calls.n).toBe(2);
    const reads = new ReadCache({ ttlMs: 60_000, maxBytes: 1 << 20 });
    expect(
      applyEvent(
        "aps",
        event("identity.seat_changed", { agentId: "ag_a", seat: "councillor", granted: true }),
        reads,
        cache,
      ),
    ).toBe("key");
    await cache.authenticate("key_a");
    await cache.authenticate("key_b");
    expect(calls.n).toBe(3);
  });

  it("a gap in the bus's events (onGap) empties both caches (a stand-in bus hands onGap over; real NATS in gap.test.ts)", async () => {
    const { cache } = counted();
    await cache.authenticate("key_a");
    const reads = new ReadCache({ ttlMs: 60_000, maxBytes: 1 << 20 });
    const version = { n: 0 };
    const produced = { n: 0 };
    await get(reads, version, produced);
    expect([cache.size, reads.stats.entries]).toEqual([1, 1]);
    let onGap: (() => void) | undefined;
    // the bus's side of onGap is tested on the real NATS (packages/platform/src/bus/gap.test.ts)
    const bus = {
      prefix: "aps",
      subscribe: async (_s: string[], _h: unknown, gap?: () => void) => {
        onGap = gap;
        return { stop: async () => undefined };
      },
    } as unknown as EventBus;
    await subscribeInvalidation(bus, reads, cache, createLogger("invalidation-test", "silent"));
    onGap!();
    expect([cache.size, reads.stats.entries]).toEqual([0, 0]);
  });
});
