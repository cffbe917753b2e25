import { callUnary, insecure } from "../grpc/client.js";

/** Deadline of calls that may generate (an engine at work), ms: below the gateway's 30 s request timeout. */
export const TRANSLATION_DEADLINE_MS = 28_000;
import { translation } from "@aps/proto";

/** Typed client of the translation service (gateway); same error contract as IdentityClient. */
export class TranslationClient {
  private readonly c: translation.TranslationServiceClient;

  /** @param addr `host:port` of the translation gRPC server (`TRANSLATION_GRPC_ADDR`). */
  constructor(addr: string) {
    this.c = new translation.TranslationServiceClient(addr, insecure());
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
    return callUnary(this.c, this.c.getQuota, { agentId });
  }
  /** True when the channel is (or becomes within `ms`) connected. */
  ready(ms: number): Promise<boolean> {
    return new Promise((resolve) => this.c.waitForReady(Date.now() + ms, (err) => resolve(!err)));
  }
  close(): void {
    this.c.close();
  }
}
