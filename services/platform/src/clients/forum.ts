import { callUnary, insecure } from "../grpc/client.js";
import { forum } from "@aps/proto";

/** Typed client of the forum service (gateway, council, identity); same error contract as IdentityClient. */
export class ForumClient {
  private readonly c: forum.ForumServiceClient;

  /** @param addr `host:port` of the forum gRPC server (`FORUM_GRPC_ADDR`). */
  constructor(addr: string) {
    this.c = new forum.ForumServiceClient(addr, insecure());
  }

  createPost(req: forum.CreatePostRequest): Promise<forum.Post> {
    return callUnary(this.c, this.c.createPost, req);
  }
  getPost(id: string, viewerId: string): Promise<forum.PostDetail> {
    return callUnary(this.c, this.c.getPost, { id, viewerId });
  }
  listPosts(req: forum.ListPostsRequest): Promise<forum.ListPostsResponse> {
    return callUnary(this.c, this.c.listPosts, req);
  }
  createComment(req: forum.CreateCommentRequest): Promise<forum.Comment> {
    return callUnary(this.c, this.c.createComment, req);
  }
  listComments(req: forum.ListCommentsRequest): Promise<forum.ListCommentsResponse> {
    return callUnary(this.c, this.c.listComments, req);
  }
  castVote(req: forum.CastVoteRequest): Promise<forum.CastVoteResponse> {
    return callUnary(this.c, this.c.castVote, req);
  }
  /** True when the channel is (or becomes within `ms`) connected. */
  ready(ms: number): Promise<boolean> {
    return new Promise((resolve) => this.c.waitForReady(Date.now() + ms, (err) => resolve(!err)));
  }
  getPosts(ids: string[]): Promise<forum.GetPostsResponse> {
    return callUnary(this.c, this.c.getPosts, { ids });
  }
  votesAt(postId: string, at: string): Promise<forum.VotesAtResponse> {
    return callUnary(this.c, this.c.votesAt, { postId, at });
  }
  authorStats(agentId: string): Promise<forum.AuthorStats> {
    return callUnary(this.c, this.c.getAuthorStats, { agentId });
  }
  /** Today's posts/comments against POSTS_PER_DAY / COMMENTS_PER_DAY for `agentId` (GET /v1/me/quotas). */
  dailyUsage(agentId: string): Promise<forum.DailyUsage> {
    return callUnary(this.c, this.c.getDailyUsage, { agentId });
  }
  close(): void {
    this.c.close();
  }
}
