import { callMethod } from "../grpc/client.js";
import type { CallerIdentity } from "../grpc/caller-auth.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";
import { knowledge } from "@aps/proto";

/** Typed client of the knowledge service (gateway); same error contract as IdentityClient. */
export class KnowledgeClient {
  private readonly c: Channel<typeof knowledge.KnowledgeServiceDefinition>;
  private readonly conn: ServiceConnection<typeof knowledge.KnowledgeServiceDefinition>;

  /** @param target `host:port` of the knowledge gRPC server (`KNOWLEDGE_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport). `caller`: who this process is, sent with every gRPC call (docs/design/services.md#caller-policy-and-internal-trust). `deadlineMs`: its calls' deadline, ms (`GRPC_DEADLINE_MS`; default 10 000). */
  constructor(
    target: ServiceTarget<typeof knowledge.KnowledgeServiceDefinition>,
    caller?: CallerIdentity,
    deadlineMs?: number,
  ) {
    this.conn = connect(target, knowledge.KnowledgeServiceClient, caller, deadlineMs);
    this.c = this.conn.methods;
  }

  search(req: knowledge.SearchRequest): Promise<knowledge.SearchResponse> {
    return callMethod(this.c, knowledge.KnowledgeServiceDefinition, "search", req);
  }
  similar(req: knowledge.SimilarRequest): Promise<knowledge.SearchResponse> {
    return callMethod(this.c, knowledge.KnowledgeServiceDefinition, "similar", req);
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/design/operations.md#health-and-readiness); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  close(): void {
    this.conn.close();
  }
}
