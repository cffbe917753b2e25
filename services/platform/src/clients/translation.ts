import { callRead, callUnary, CHANNEL_OPTIONS, insecure } from "../grpc/client.js";
import { HealthClient } from "../grpc/health.js";

/** Deadline of calls that may generate (an engine at work), ms: below the gateway's 30 s request timeout. */
export const TRANSLATION_DEADLINE_MS = 28_000;
import { translation } from "@aps/proto";

/** Typed client of the translation service (gateway); same error contract as IdentityClient. */
export class TranslationClient {
  private readonly c: translation.TranslationServiceClient;
  private readonly health: HealthClient;

  /**
   * @param addr `host:port` of the translation gRPC server (`TRANSLATION_GRPC_ADDR`).
   * Calls that may generate (and spend quota) are never retried; `getQuota` is a read and is.
   */
  constructor(addr: string) {
    this.c = new translation.TranslationServiceClient(addr, insecure(), { ...CHANNEL_OPTIONS });
    this.health = new HealthClient(addr);
  }

  /** A post in `lang`; `agentId` "" = anonymous (cache only → translation_not_cached). */
  translatePost(req: translation.TranslatePostRequest): Promise<translation.PostTranslation> {
    return callUnary(this.c, this.c.translatePost, req, TRANSLATION_DEADLINE_MS);
  }
  /** Titles of ≤ 50 posts in `lang`; what cannot be served is in `missing`. */
  translateTitles(req: translation.TranslateTitlesRequest): Promise<translation.TranslateTitlesResponse> {
    return callUnary(this.c, this.c.translateTitles, req, TRANSLATION_DEADLINE_MS);
  }
  /** A Markdown document (skill.md) in `lang`, cached per content version. */
  translateDocument(req: translation.TranslateDocumentRequest): Promise<translation.DocumentTranslation> {
    return callUnary(this.c, this.c.translateDocument, req, TRANSLATION_DEADLINE_MS);
  }
  /** `agentId`'s translation quota today: `{limit, used, resetAt}`. */
  getQuota(agentId: string): Promise<translation.Quota> {
    return callRead(this.c, this.c.getQuota, { agentId });
  }
  /** True when the service answers its gRPC health check SERVING within `ms` (docs/adr/0075). */
  ready(ms: number): Promise<boolean> {
    return this.health.serving(ms);
  }
  close(): void {
    this.c.close();
    this.health.close();
  }
}
