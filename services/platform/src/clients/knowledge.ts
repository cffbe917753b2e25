import { callRead, callUnary, CHANNEL_OPTIONS, insecure } from "../grpc/client.js";
import { HealthClient } from "../grpc/health.js";
import { knowledge } from "@aps/proto";

/** Typed client of the knowledge service (gateway); same error contract as IdentityClient. */
export class KnowledgeClient {
  private readonly c: knowledge.KnowledgeServiceClient;
  private readonly health: HealthClient;

  /** @param addr `host:port` of the knowledge gRPC server (`KNOWLEDGE_GRPC_ADDR`). */
  constructor(addr: string) {
    this.c = new knowledge.KnowledgeServiceClient(addr, insecure(), { ...CHANNEL_OPTIONS });
    this.health = new HealthClient(addr);
  }

  search(req: knowledge.SearchRequest): Promise<knowledge.SearchResponse> {
    return callRead(this.c, this.c.search, req);
  }
  similar(req: knowledge.SimilarRequest): Promise<knowledge.SearchResponse> {
    return callRead(this.c, this.c.similar, req);
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/adr/0075); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.health.serving(ms);
  }
  close(): void {
    this.c.close();
    this.health.close();
  }
}
