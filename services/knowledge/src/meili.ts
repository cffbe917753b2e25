import { Meilisearch, MeilisearchError, type Index } from "meilisearch";
import { ApsError } from "@aps/platform";
import type { KnowledgeDoc, SearchEngine, SearchOptions, SearchResult } from "./engine.js";

/** Connection of the Meilisearch engine (`MEILISEARCH_URL`, `MEILISEARCH_API_KEY`). */
export interface MeiliOptions {
  url: string;
  apiKey?: string | undefined;
  /** Index uid (default `aps-knowledge`). */
  index?: string;
}

/** Any Meilisearch failure (unreachable, task failed, API error) → 503 `upstream_unavailable`. */
async function mapped<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApsError) throw err;
    const detail = err instanceof MeilisearchError ? err.message : String(err);
    throw new ApsError("upstream_unavailable", `search engine unavailable (${what}): ${detail}`.slice(0, 300), 5);
  }
}

/**
 * The production engine (docs/architecture.md §8) on Meilisearch via the official client: `init` creates the
 * index and applies its settings (searchable title/body, filterable `tags`) idempotently; every
 * write waits for its task, so a document is searchable when `upsert` resolves.
 */
export class MeiliEngine implements SearchEngine {
  readonly name = "meilisearch";
  private readonly client: Meilisearch;
  private readonly uid: string;
  private readonly idx: Index<KnowledgeDoc>;

  constructor(opts: MeiliOptions) {
    this.client = new Meilisearch({ host: opts.url, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
    this.uid = opts.index ?? "aps-knowledge";
    this.idx = this.client.index<KnowledgeDoc>(this.uid);
  }

  async init(): Promise<void> {
    await mapped("init", async () => {
      const t = await this.client.createIndex(this.uid, { primaryKey: "id" }).waitTask();
      if (t.status === "failed" && t.error?.code !== "index_already_exists")
        throw new Error(t.error?.message ?? "createIndex failed");
      const s = await this.idx
        .updateSettings({
          searchableAttributes: ["title", "body"],
          filterableAttributes: ["tags"],
          displayedAttributes: ["id", "kind", "title", "body", "url", "tags"],
        })
        .waitTask();
      if (s.status === "failed") throw new Error(s.error?.message ?? "updateSettings failed");
    });
  }

  async upsert(docs: KnowledgeDoc[]): Promise<void> {
    if (docs.length === 0) return;
    await mapped("upsert", async () => {
      const t = await this.idx
        .addDocuments(docs.map((d) => ({ ...d, tags: d.tags.map((x) => x.toLowerCase()) })))
        .waitTask();
      if (t.status === "failed") throw new Error(t.error?.message ?? "addDocuments failed");
    });
  }

  async remove(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await mapped("remove", async () => {
      const t = await this.idx.deleteDocuments(ids).waitTask();
      if (t.status === "failed") throw new Error(t.error?.message ?? "deleteDocuments failed");
    });
  }

  async search(q: string, tags: string[], limit: number, opts: SearchOptions = {}): Promise<SearchResult> {
    return mapped("search", async () => {
      const r = await this.idx.search(q, {
        // Every tag must match: an array of filters is their AND.
        ...(tags.length > 0 ? { filter: tags.map((t) => `tags = ${JSON.stringify(t.toLowerCase())}`) } : {}),
        limit,
        matchingStrategy: opts.match === "any" ? "last" : "all",
        attributesToCrop: ["body"],
        cropLength: 40,
        attributesToHighlight: ["title", "body"],
        highlightPreTag: "**",
        highlightPostTag: "**",
        showRankingScore: true,
        ...(opts.match === "any" && opts.minScore ? { rankingScoreThreshold: opts.minScore } : {}),
      });
      const hits = r.hits.map((h) => {
        const f = (h._formatted ?? {}) as Partial<Record<"title" | "body", string>>;
        const body = (f.body ?? h.body).replace(/\s+/g, " ");
        const snip = body.includes("**") || !f.title?.includes("**") ? body : f.title;
        return {
          id: h.id,
          kind: h.kind,
          title: h.title,
          url: h.url,
          snippet: snip,
          tags: h.tags,
          score: Math.round((h._rankingScore ?? 0) * 1000) / 1000,
        };
      });
      return { hits, total: r.estimatedTotalHits ?? hits.length };
    });
  }

  async close(): Promise<void> {}
}
