import { callMethod } from "../grpc/client.js";
import type { CallerIdentity } from "../grpc/caller-auth.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";

/** Deadline of calls that may generate (an engine at work), ms: below the gateway's 30 s request timeout. */
export const TRANSLATION_DEADLINE_MS = 28_000;
import { translation } from "@aps/proto";

/** Typed client of the translation service (gateway); same error contract as IdentityClient. */
export class TranslationClient {
  private readonly c: Channel<typeof translation.TranslationServiceDefinition>;
  private readonly conn: ServiceConnection<typeof translation.TranslationServiceDefinition>;

  /**
   * @param target `host:port` of the translation gRPC server (`TRANSLATION_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/design/services.md#in-process-transport).
   * Calls that may generate (and spend quota) are never retried; `getQuota` is a read and is.
   * `deadlineMs`: the deadline of calls that name none, ms (`GRPC_DEADLINE_MS`; default 10 000).
   */
  constructor(
    target: ServiceTarget<typeof translation.TranslationServiceDefinition>,
    caller?: CallerIdentity,
    deadlineMs?: number,
  ) {
    this.conn = connect(target, translation.TranslationServiceClient, caller, deadlineMs);
    this.c = this.conn.methods;
  }

  /** A post in `lang`; `agentId` "" = anonymous (cache only → translation_not_cached). */
  translatePost(req: translation.TranslatePostRequest): Promise<translation.PostTranslation> {
    return callMethod(this.c, translation.TranslationServiceDefinition, "translatePost", req, TRANSLATION_DEADLINE_MS);
  }
  /** Titles of ≤ 50 posts in `lang`; what cannot be served is in `missing`. */
  translateTitles(req: translation.TranslateTitlesRequest): Promise<translation.TranslateTitlesResponse> {
    return callMethod(
      this.c,
      translation.TranslationServiceDefinition,
      "translateTitles",
      req,
      TRANSLATION_DEADLINE_MS,
    );
  }
  /** A Markdown document (skill.md) in `lang`, cached per content version. */
  translateDocument(req: translation.TranslateDocumentRequest): Promise<translation.DocumentTranslation> {
    return callMethod(
      this.c,
      translation.TranslationServiceDefinition,
      "translateDocument",
      req,
      TRANSLATION_DEADLINE_MS,
    );
  }
  /** `agentId`'s translation quota today: `{limit, used, resetAt}`. */
  getQuota(agentId: string): Promise<translation.Quota> {
    return callMethod(this.c, translation.TranslationServiceDefinition, "getQuota", { agentId });
  }
  /** The language pairs the running engine offers (`GET /v1/capabilities`, docs/design/edge.md#index-405-and-404); a read, retried. */
  listPairs(): Promise<translation.ListPairsResponse> {
    return callMethod(this.c, translation.TranslationServiceDefinition, "listPairs", {});
  }
  /** True when the service answers its gRPC health check SERVING within `ms` (docs/design/operations.md#health-and-readiness). */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  close(): void {
    this.conn.close();
  }
}
