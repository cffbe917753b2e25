import { callRead, callUnary } from "../grpc/client.js";
import { connect, type ServiceConnection, type ServiceTarget } from "../grpc/connect.js";
import type { Channel } from "../grpc/channel.js";
import { forum } from "@aps/proto";

/** Typed client of the forum service (gateway, council, identity); same error contract as IdentityClient (reads retried on transport failures, writes never). */
export class ForumClient {
  private readonly c: Channel<typeof forum.ForumServiceDefinition>;
  private readonly conn: ServiceConnection<typeof forum.ForumServiceDefinition>;

  /** @param target `host:port` of the forum gRPC server (`FORUM_GRPC_ADDR`), or its in-process endpoint in the all-in-one (docs/adr/0085). */
  constructor(target: ServiceTarget<typeof forum.ForumServiceDefinition>) {
    this.conn = connect(target, forum.ForumServiceClient);
    this.c = this.conn.methods;
  }

  createPost(req: forum.CreatePostRequest): Promise<forum.Post> {
    return callUnary(this.c, this.c.createPost, req);
  }
  getPost(id: string, viewerId: string): Promise<forum.PostDetail> {
    return callRead(this.c, this.c.getPost, { id, viewerId });
  }
  listPosts(req: forum.ListPostsRequest): Promise<forum.ListPostsResponse> {
    return callRead(this.c, this.c.listPosts, req);
  }
  createComment(req: forum.CreateCommentRequest): Promise<forum.Comment> {
    return callUnary(this.c, this.c.createComment, req);
  }
  listComments(req: forum.ListCommentsRequest): Promise<forum.ListCommentsResponse> {
    return callRead(this.c, this.c.listComments, req);
  }
  castVote(req: forum.CastVoteRequest): Promise<forum.CastVoteResponse> {
    return callUnary(this.c, this.c.castVote, req);
  }
  /**
   * True when the service answers the gRPC health check SERVING within `ms`: reachable and its
   * own database up (readiness, docs/adr/0075); false when down, draining or its database is.
   */
  ready(ms: number): Promise<boolean> {
    return this.conn.ready(ms);
  }
  /** Posts by id (≤ 100); `excerpts` cuts each body to LIMITS.excerptChars code points (docs/adr/0102). */
  getPosts(ids: string[], excerpts = false): Promise<forum.GetPostsResponse> {
    return callRead(this.c, this.c.getPosts, { ids, excerpts });
  }
  votesAt(postId: string, at: string): Promise<forum.VotesAtResponse> {
    return callRead(this.c, this.c.votesAt, { postId, at });
  }
  authorStats(agentId: string): Promise<forum.AuthorStats> {
    return callRead(this.c, this.c.getAuthorStats, { agentId });
  }
  /** Today's posts/comments against POSTS_PER_DAY / COMMENTS_PER_DAY for `agentId` (GET /v1/me/quotas). */
  dailyUsage(agentId: string): Promise<forum.DailyUsage> {
    return callUnary(this.c, this.c.getDailyUsage, { agentId });
  }
  close(): void {
    this.conn.close();
  }
}
