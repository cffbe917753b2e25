import { ApsError, SEARCH_KINDS, type KnowledgeClient } from "@aps/platform";
import type { knowledge } from "@aps/proto";
import { oneOf } from "../route.js";

/** The knowledge client, or 503 `upstream_unavailable` (Retry-After 60 s) when search is not deployed. */
export function knowledgeOf(k: KnowledgeClient | undefined): KnowledgeClient {
  if (!k) throw new ApsError("upstream_unavailable", "search is not configured on this deployment", 60);
  return k;
}

/** A hit as HTTP answers it (openapi/responses.ts `SearchHit`): the proto's fields, `kind` doc, post or comment. */
export function renderHit(h: knowledge.SearchHit) {
  return { ...h, kind: oneOf(SEARCH_KINDS, h.kind, "search hit kind") };
}
