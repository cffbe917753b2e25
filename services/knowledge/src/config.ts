import { z } from "zod";
import { commonEnvSchema, defaultGrpcAddr, defaultListenAddr, grpcAddr, optionalVar, parseEnv } from "@aps/platform";

/** Env schema of the knowledge service (README "Configuration"). */
export const knowledgeEnvSchema = commonEnvSchema.extend({
  /** Listen address of the gRPC server. */
  KNOWLEDGE_LISTEN_ADDR: grpcAddr(defaultListenAddr("knowledge")),
  /** The forum, re-indexed at start and read when an event arrives. */
  FORUM_GRPC_ADDR: grpcAddr(defaultGrpcAddr("forum")),
  /** Meilisearch (docs/design/services.md#two-ways-to-run); the embedded engine when unset. */
  MEILISEARCH_URL: optionalVar(),
  MEILISEARCH_API_KEY: optionalVar(),
  MEILISEARCH_INDEX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/)
    .default("aps-knowledge"),
  /**
   * Folder of a durable MiniSearch index (snapshot + append log, docs/design/search-and-translation.md#resume-and-rebuild) instead of the
   * PostgreSQL one (docs/design/search-and-translation.md#the-postgresql-engine); unset without a database: in memory, rebuilt from the forum at
   * every start.
   */
  KNOWLEDGE_INDEX_DIR: optionalVar(),
  /**
   * PostgreSQL of the search index (docs/design/search-and-translation.md#the-postgresql-engine): when set (and no Meilisearch), the service keeps
   * its index in its `knowledge` schema there — durable, shared by replicas, nothing loaded at start.
   * Opt-in for a service on its own (not DATABASE_URL: the chart's knowledge has no database); the
   * all-in-one always uses its database so.
   */
  KNOWLEDGE_DATABASE_URL: optionalVar(),
  /**
   * `postgres`: the index in PostgreSQL whatever else is set — at KNOWLEDGE_DATABASE_URL, else
   * DATABASE_URL (the chart's `search.engine: postgres`, no Meilisearch); `auto` (default): as above.
   */
  KNOWLEDGE_ENGINE: z.enum(["auto", "postgres"]).default("auto"),
  /** Folder of the reference pages (docs/reference with index.json); default: the repository's. */
  KNOWLEDGE_DOCS_DIR: optionalVar(),
});

/** Typed knowledge config; `indexDatabaseUrl` is where a PostgreSQL index lives when configured (see KNOWLEDGE_ENGINE). */
export type KnowledgeConfig = z.infer<typeof knowledgeEnvSchema> & { indexDatabaseUrl: string | undefined };

/**
 * Parses the knowledge service's config from `env`; throws listing every bad variable, or when
 * KNOWLEDGE_ENGINE=postgres has no database URL or is given MEILISEARCH_URL too.
 */
export function loadConfig(env: NodeJS.ProcessEnv): KnowledgeConfig {
  const c = parseEnv(knowledgeEnvSchema, env);
  const postgres = c.KNOWLEDGE_ENGINE === "postgres";
  const indexDatabaseUrl = c.KNOWLEDGE_DATABASE_URL ?? (postgres ? c.DATABASE_URL : undefined);
  if (postgres && !indexDatabaseUrl)
    throw new Error("KNOWLEDGE_ENGINE=postgres needs KNOWLEDGE_DATABASE_URL or DATABASE_URL");
  if (postgres && c.MEILISEARCH_URL)
    throw new Error("KNOWLEDGE_ENGINE=postgres and MEILISEARCH_URL: choose one engine");
  return { ...c, indexDatabaseUrl };
}
