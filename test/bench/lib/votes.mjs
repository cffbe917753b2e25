// The vote load with its own oracle (docs/performance.md): random agent, post and ±1 per
// request, and the bench records the last vote each agent cast on each post, so that the tallies
// the system then shows can be checked exactly against an independent count.
//
// Exactness under 50 connections: a pair (agent, post) is never in flight twice at once, so the
// answers for one pair arrive in the order the server committed them. A pair whose outcome is
// unknown (cut at the end of the load, timed out, 5xx) stays locked and is sent once more after
// the load with the same vote: whatever the server did with the lost request, the pair ends on
// that vote (the request before it on that pair had already been answered).

/**
 * @typedef {{ agentId: string, apiKey: string }} Agent
 */

/**
 * Creates the oracle and its autocannon request for `agents` × `postIds`.
 * @param {Agent[]} agents
 * @param {string[]} postIds
 * @param {Map<string, number>} [prior] votes already cast on these posts (`${agent index}:${post
 *   index}` → ±1, e.g. an earlier oracle's `latestVotes()` on the same leading agents and posts):
 *   counted in `expected()`; pairs with an agent index past `agents` are never sent again
 */
export function voteOracle(agents, postIds, prior = new Map()) {
  /** `${agent index}:${post index}` → last vote answered 2xx */
  const latest = new Map([...prior].filter(([key]) => Number(key.split(":")[1]) < postIds.length));
  /** pairs sent and not answered yet (or answered 5xx) → the vote sent */
  const inflight = new Map();
  let rejected = 0;
  const pick = () => {
    for (;;) {
      const a = Math.floor(Math.random() * agents.length);
      const p = Math.floor(Math.random() * postIds.length);
      const key = `${a}:${p}`;
      if (!inflight.has(key)) return { a, p, key };
    }
  };
  const request = {
    method: "POST",
    path: `/v1/posts/${postIds[0]}/vote`,
    setupRequest(req, context) {
      const { a, p, key } = pick();
      const vote = Math.random() < 0.5 ? 1 : -1;
      inflight.set(key, vote);
      context.key = key;
      req.path = `/v1/posts/${postIds[p]}/vote`;
      req.headers = { ...req.headers, authorization: `Bearer ${agents[a].apiKey}`, "content-type": "application/json" };
      req.body = `{"vote":${vote}}`;
      return req;
    },
    onResponse(status, _body, context) {
      const key = context.key;
      if (status >= 500) return; // outcome unknown: stays locked, re-sent by settle()
      const vote = inflight.get(key);
      inflight.delete(key);
      if (status >= 200 && status < 300) latest.set(key, vote);
      else rejected++; // a 4xx changes nothing (house rule: bad input changes nothing)
    },
  };
  return {
    request,
    /** 4xx answers seen (each changed nothing). */
    get rejected() {
      return rejected;
    },
    /**
     * Re-sends every pair whose outcome is unknown with the same vote, until it answers 2xx, and
     * records it. Returns how many pairs were settled. Throws when one keeps failing (5 tries).
     * @param {string} base `http://127.0.0.1:<port>/v1`
     */
    async settle(base) {
      const pending = [...inflight];
      for (const [key, vote] of pending) {
        const [a, p] = key.split(":").map(Number);
        for (let attempt = 1; ; attempt++) {
          const r = await fetch(`${base}/posts/${postIds[p]}/vote`, {
            method: "POST",
            headers: { authorization: `Bearer ${agents[a].apiKey}`, "content-type": "application/json" },
            body: JSON.stringify({ vote }),
          });
          await r.arrayBuffer();
          if (r.ok) break;
          if (attempt === 5) throw new Error(`re-sending a vote: ${r.status}`);
          await new Promise((res) => setTimeout(res, 200 * attempt));
        }
        inflight.delete(key);
        latest.set(key, vote);
      }
      return pending.length;
    },
    /** Expected tallies per post id from the recorded votes: `Map<postId, { for, against }>` (every post, 0/0 included). */
    expected() {
      const m = new Map(postIds.map((id) => [id, { for: 0, against: 0 }]));
      for (const [key, vote] of latest) {
        const t = m.get(postIds[Number(key.split(":")[1])]);
        if (vote === 1) t.for++;
        else t.against++;
      }
      return m;
    },
    /** The last vote recorded per `${agent index}:${post index}` (a copy). */
    latestVotes() {
      return new Map(latest);
    },
    /** Number of (agent, post) pairs with a recorded vote. */
    get pairs() {
      return latest.size;
    },
  };
}

/**
 * Compares `expected` with `votes.for`/`votes.against` of `GET {base}/posts/{id}` for every post,
 * re-reading the posts that differ for up to `waitMs` (a public read cache may lag behind the
 * forum by an event). Returns `{ posts, exact, mismatches (first 5: id, expected, got), waitedMs }`.
 * @param {string} base
 * @param {Map<string, { for: number, against: number }>} expected
 * @param {number} [waitMs]
 */
export async function checkTallies(base, expected, waitMs = 15_000) {
  const t0 = performance.now();
  let todo = [...expected.keys()];
  let mismatches = [];
  for (;;) {
    mismatches = [];
    let i = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (i < todo.length) {
          const id = todo[i++];
          const r = await fetch(`${base}/posts/${id}`);
          const got = r.ok ? (await r.json()).votes : { status: r.status, body: (await r.text()).slice(0, 100) };
          const want = expected.get(id);
          if (got?.for !== want.for || got?.against !== want.against) mismatches.push({ id, expected: want, got });
        }
      }),
    );
    if (mismatches.length === 0 || performance.now() - t0 > waitMs) break;
    todo = mismatches.map((m) => m.id);
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    posts: expected.size,
    exact: expected.size - mismatches.length,
    mismatches: mismatches.slice(0, 5),
    waitedMs: Math.round(performance.now() - t0),
  };
}
