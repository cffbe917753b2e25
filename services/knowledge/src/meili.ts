import { Meilisearch, MeilisearchApiError, MeilisearchError, type Index } from "meilisearch";
import { ApsError } from "@aps/platform";
import type { KnowledgeDoc, SearchEngine, SearchOptions, SearchResult } from "./engine.js";

/**
 * Version of what the Meilisearch index holds and how it is set up (document shape, settings).
 * Bump it when either changes: a start that finds another version rebuilds (docs/design/search-and-translation.md#resume-and-rebuild).
 */
/** 2: comments are documents too (docs/design/search-and-translation.md#comments-in-search). */
export const MEILI_INDEX_FORMAT = 2;

/** The settings `init` applies to the index (searchable title/body, filterable tags). */
const SETTINGS = {
  searchableAttributes: ["title", "body"],
  filterableAttributes: ["tags"],
  displayedAttributes: ["id", "kind", "title", "body", "url", "tags"],
};

/**
 * Where the index stands, kept as the one document `state` of the index `<uid>-state` beside it
 * (so it lives and is lost with the same server): the format it was built with and whether a full
 * build finished (docs/design/search-and-translation.md#resume-and-rebuild).
 */
interface IndexState {
  id: "state";
  format: number;
  complete: boolean;
}

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
 * The production engine (docs/design/search-and-translation.md#search-engines) on Meilisearch via the official client: `init` creates the
 * index and applies its settings (searchable title/body, filterable `tags`) idempotently; every
 * write waits for its task, so a document is searchable when `upsert` resolves.
 *
 * Resuming (docs/design/search-and-translation.md#resume-and-rebuild): `init` reads the index's state document; when a full
 * build of this format finished and the index still holds documents, `restored` is true and the
 * service does not read the forum again — the durable `knowledge-index` consumer brings the changes
 * made meanwhile. Otherwise `init` marks the state incomplete before the rebuild, and `checkpoint()`
 * (after the rebuild) marks it complete, so an interrupted rebuild is never taken for a whole index.
 */
export class MeiliEngine implements SearchEngine {
  readonly name = "meilisearch";
  private readonly client: Meilisearch;
  private readonly uid: string;
  private readonly idx: Index<KnowledgeDoc>;
  private readonly stateIdx: Index<IndexState>;
  /** True when `init()` found a complete index of this format: the forum need not be read again. */
  restored = false;

  constructor(opts: MeiliOptions) {
    this.client = new Meilisearch({ host: opts.url, ...(opts.apiKey ? { apiKey: opts.apiKey } : {}) });
    this.uid = opts.index ?? "aps-knowledge";
    this.idx = this.client.index<KnowledgeDoc>(this.uid);
    this.stateIdx = this.client.index<IndexState>(`${this.uid}-state`);
  }

  async init(): Promise<void> {
    await mapped("init", async () => {
      for (const uid of [this.uid, `${this.uid}-state`]) {
        const t = await this.client.createIndex(uid, { primaryKey: "id" }).waitTask();
        if (t.status === "failed" && t.error?.code !== "index_already_exists")
          throw new Error(t.error?.message ?? "createIndex failed");
      }
      const s = await this.idx.updateSettings(SETTINGS).waitTask();
      if (s.status === "failed") throw new Error(s.error?.message ?? "updateSettings failed");
      const state = await this.readState();
      const held = (await this.idx.getStats()).numberOfDocuments;
      this.restored = state?.format === MEILI_INDEX_FORMAT && state.complete && held > 0;
      if (!this.restored) await this.writeState(false);
    });
  }

  /** Marks the index complete for this format (after a full build, or a restore whose docs pages changed). */
  async checkpoint(): Promise<void> {
    await mapped("checkpoint", () => this.writeState(true));
  }

  /** The state document, or undefined when there is none yet. */
  private async readState(): Promise<IndexState | undefined> {
    try {
      return await this.stateIdx.getDocument<IndexState>("state");
    } catch (err) {
      if (err instanceof MeilisearchApiError && err.cause?.code === "document_not_found") return undefined;
      throw err;
    }
  }

  private async writeState(complete: boolean): Promise<void> {
    const t = await this.stateIdx.addDocuments([{ id: "state", format: MEILI_INDEX_FORMAT, complete }]).waitTask();
    if (t.status === "failed") throw new Error(t.error?.message ?? "writing the index state failed");
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
