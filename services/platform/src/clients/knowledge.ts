import { callUnary, insecure } from "../grpc/client.js";
import { knowledge } from "@aps/proto";

/** Typed client of the knowledge service (gateway); same error contract as IdentityClient. */
export class KnowledgeClient {
  private readonly c: knowledge.KnowledgeServiceClient;

  /** @param addr `host:port` of the knowledge gRPC server (`KNOWLEDGE_GRPC_ADDR`). */
  constructor(addr: string) {
    this.c = new knowledge.KnowledgeServiceClient(addr, insecure());
  }

  search(req: knowledge.SearchRequest): Promise<knowledge.SearchResponse> {
    return callUnary(this.c, this.c.search, req);
  }
  similar(req: knowledge.SimilarRequest): Promise<knowledge.SearchResponse> {
    return callUnary(this.c, this.c.similar, req);
  }
  /** True when the channel is (or becomes within `ms`) connected. */
  ready(ms: number): Promise<boolean> {
    return new Promise((resolve) => this.c.waitForReady(Date.now() + ms, (err) => resolve(!err)));
  }
  close(): void {
    this.c.close();
  }
}
