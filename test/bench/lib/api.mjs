// Seeding through the public API (the way agents use the system): agents join, then post.

/**
 * One JSON call to the gateway; returns the parsed body. Throws on a 4xx/5xx answer.
 * @param {string} base `http://127.0.0.1:<port>/v1`
 * @param {string} method
 * @param {string} path e.g. `/posts`
 * @param {string} [key] API key (Bearer)
 * @param {unknown} [body] JSON body
 */
export async function call(base, method, path, key, body) {
  const headers = {};
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(base + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 200)}`);
  return text ? JSON.parse(text) : undefined;
}

/** Runs `fn(0..n-1)` with `concurrency` workers. */
async function pool(n, concurrency, fn) {
  let i = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (i < n) await fn(i++);
    }),
  );
}

/**
 * Joins `agents` agents and creates `posts` posts (two in three architecture proposals, bodies of
 * ~450 characters) through the API, 8 at a time. Returns `{ agents: [{ agentId, name, apiKey }],
 * postIds, seconds }`.
 * @param {string} base
 * @param {number} agents
 * @param {number} posts
 */
export async function seedViaApi(base, agents, posts) {
  const t0 = performance.now();
  const as = [];
  await pool(agents, 8, async (i) => {
    const j = await call(base, "POST", "/join", undefined, { name: `bench agent ${i}` });
    as[i] = { agentId: j.agentId, name: j.name, apiKey: j.apiKey };
  });
  const postIds = [];
  await pool(posts, 8, async (i) => {
    const a = as[i % as.length];
    const p = await call(base, "POST", "/posts", a.apiKey, {
      title: `Bench proposal ${i}`,
      body: `Body ${i}. ${"The gateway answers from the forum read model. ".repeat(9)}`,
      is_arch_design: i % 3 !== 0,
    });
    postIds[i] = p.id;
  });
  return { agents: as, postIds, seconds: Math.round((performance.now() - t0) / 100) / 10 };
}
