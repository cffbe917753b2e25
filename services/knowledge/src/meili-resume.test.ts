import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { MeiliEngine, MEILI_INDEX_FORMAT } from "./meili.js";

/**
 * The Meilisearch engine resumes (docs/design/search-and-translation.md#resume-and-rebuild): a start that finds a complete
 * index of its format says `restored` (the service then reads nothing from the forum); an
 * interrupted rebuild, another format or an emptied index make it rebuild.
 *
 * Run against a real Meilisearch when MEILISEARCH_URL is set, and always against a STAND-IN: no
 * Meilisearch binary, image or crate can be installed on this machine (docs/design/tests.md#loud-skips), so a small
 * HTTP server answers the seven calls the engine makes here (create index, settings, add and get
 * documents, delete documents, stats, tasks) the way Meilisearch's API documents them. It tests
 * the engine's resume logic, not Meilisearch.
 */

/** Meilisearch's task and document API, in memory: every task succeeds at once (`index_already_exists` when it should). */
function meiliStandIn(): Promise<{
  url: string;
  indexes: Map<string, Map<string, Record<string, unknown>>>;
  close(): Promise<void>;
}> {
  const indexes = new Map<string, Map<string, Record<string, unknown>>>();
  const tasks = new Map<number, Record<string, unknown>>();
  let next = 0;
  const task = (indexUid: string, type: string, error?: { code: string; message: string }) => {
    const uid = next++;
    tasks.set(uid, {
      uid,
      indexUid,
      type,
      status: error ? "failed" : "succeeded",
      error: error ?? null,
      enqueuedAt: new Date().toISOString(),
    });
    return { taskUid: uid, indexUid, status: "enqueued", type, enqueuedAt: new Date().toISOString() };
  };
  const body = async (req: IncomingMessage): Promise<any> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
  };
  const send = (res: ServerResponse, status: number, json: unknown) => {
    res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(json));
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url!, "http://x").pathname.split("/").filter(Boolean);
      const b = await body(req);
      if (req.method === "POST" && path[0] === "indexes" && path.length === 1) {
        if (indexes.has(b.uid))
          return send(
            res,
            202,
            task(b.uid, "indexCreation", {
              code: "index_already_exists",
              message: `Index \`${b.uid}\` already exists.`,
            }),
          );
        indexes.set(b.uid, new Map());
        return send(res, 202, task(b.uid, "indexCreation"));
      }
      if (path[0] === "tasks" && path.length === 2) return send(res, 200, tasks.get(Number(path[1])));
      const idx = indexes.get(path[1] ?? "");
      if (path[0] !== "indexes" || !idx) return send(res, 404, { code: "index_not_found", message: "no such index" });
      const uid = path[1]!;
      if (req.method === "PATCH" && path[2] === "settings") return send(res, 202, task(uid, "settingsUpdate"));
      if (req.method === "GET" && path[2] === "stats")
        return send(res, 200, { numberOfDocuments: idx.size, isIndexing: false });
      if (req.method === "POST" && path[2] === "documents" && path.length === 3) {
        for (const d of b as Record<string, unknown>[]) idx.set(String(d.id), d);
        return send(res, 202, task(uid, "documentAdditionOrUpdate"));
      }
      if (req.method === "POST" && path[2] === "documents" && path[3] === "delete-batch") {
        for (const id of b as string[]) idx.delete(id);
        return send(res, 202, task(uid, "documentDeletion"));
      }
      if (req.method === "GET" && path[2] === "documents" && path[3]) {
        const d = idx.get(path[3]);
        return d
          ? send(res, 200, d)
          : send(res, 404, {
              code: "document_not_found",
              message: `Document \`${path[3]}\` not found.`,
              type: "invalid_request",
            });
      }
      send(res, 501, { code: "not_in_stand_in", message: `${req.method} ${req.url}` });
    })();
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        indexes,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

const doc = (id: string) => ({
  id,
  kind: "post" as const,
  title: `Post ${id}`,
  body: "text",
  url: `/posts/${id}`,
  tags: ["post"],
});

const REAL = process.env.MEILISEARCH_URL;
if (!REAL)
  console.warn(
    "⚠️  MEILISEARCH_URL is unset: the resume test runs against the Meilisearch STAND-IN only (no server here)",
  );

describe.each([
  { name: "a Meilisearch HTTP stand-in (FAKE: no Meilisearch can run here)", real: false },
  {
    name: REAL ? "a real Meilisearch (MEILISEARCH_URL)" : "a real Meilisearch (SKIPPED: MEILISEARCH_URL is unset)",
    real: true,
  },
])("MeiliEngine resumes on $name (docs/design/search-and-translation.md#resume-and-rebuild)", ({ real }) => {
  const run = real && !REAL ? it.skip : it;
  let server: Awaited<ReturnType<typeof meiliStandIn>> | undefined;
  const uid = `aps-resume-${Date.now().toString(36)}-${Math.floor(Math.random() * 1e6)}`;
  const engine = () =>
    new MeiliEngine({
      url: real ? REAL! : server!.url,
      apiKey: real ? process.env.MEILISEARCH_API_KEY : undefined,
      index: uid,
    });
  beforeAll(async () => {
    if (!real) server = await meiliStandIn();
  });
  afterAll(async () => {
    await server?.close();
  });

  run("rebuilds on a first start, resumes after a completed build, rebuilds after an interrupted one", async () => {
    const first = engine();
    await first.init();
    expect(first.restored).toBe(false);
    await first.upsert([doc("p_1"), doc("p_2")]);
    // stopped before the rebuild's checkpoint: the next start must not trust the index
    const interrupted = engine();
    await interrupted.init();
    expect(interrupted.restored).toBe(false);
    await interrupted.upsert([doc("p_1"), doc("p_2"), doc("p_3")]);
    await interrupted.checkpoint();
    const resumed = engine();
    await resumed.init();
    expect(resumed.restored).toBe(true);
    if (!real) expect([...server!.indexes.get(uid)!.keys()].sort()).toEqual(["p_1", "p_2", "p_3"]);
  });

  run("rebuilds when the index was built with another format or holds nothing", async () => {
    if (real) return; // both need the server's data changed behind the engine's back
    const built = engine();
    await built.init();
    await built.upsert([doc("p_9")]);
    await built.checkpoint();
    server!.indexes.get(`${uid}-state`)!.set("state", { id: "state", format: MEILI_INDEX_FORMAT - 1, complete: true });
    const older = engine();
    await older.init();
    expect(older.restored).toBe(false);
    await older.checkpoint();
    server!.indexes.get(uid)!.clear();
    const emptied = engine();
    await emptied.init();
    expect(emptied.restored).toBe(false);
  });
});
