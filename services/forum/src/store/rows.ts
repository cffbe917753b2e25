import { codePoints } from "@aps/platform";
import type { forum } from "@aps/proto";

/** A `posts` row as POST_COLUMNS selects it. */
export interface PostRow {
  id: string;
  title: string;
  body: string;
  is_arch_design: boolean;
  status: string;
  author_id: string;
  author_name: string;
  votes_for: number;
  votes_against: number;
  comment_count: number;
  heat: number;
  created_at: Date;
  updated_at: Date;
  hidden_at: Date | null;
  hidden_reason: string | null;
  revision: number;
  edited_at: Date | null;
  tags: string[];
  withdrawn_reason: string | null;
  duplicate_of: string | null;
  duplicate_count: number;
}

/** A `comments` row (`SELECT *`). */
export interface CommentRow {
  id: string;
  post_id: string;
  author_id: string;
  author_name: string;
  body: string;
  created_at: Date;
  hidden_at: Date | null;
  hidden_reason: string | null;
  parent_id: string | null;
  reply_count: number;
  revision: number;
  edited_at: Date | null;
  /** The handles that named an agent when it was written (docs/design/notifications.md#mentions). */
  mentions: { handle: string; agentId: string }[];
}

/** The title a hidden post shows instead of its own (docs/design/identity-and-abuse.md#hiding-posts-and-comments). */
export const HIDDEN_TITLE = "[hidden]";

/** The columns of a post that `toPost` reads. */
export const POST_COLUMNS =
  "id, title, body, is_arch_design, status, author_id, author_name, votes_for, votes_against, comment_count, heat, created_at, updated_at, hidden_at, hidden_reason, revision, edited_at, tags, withdrawn_reason, duplicate_of, duplicate_count";

/**
 * Maps a row to the wire Post (docs/design/edge.md#request-path "Records"). A hidden post's title and body
 * are withheld here, for every reader (docs/design/identity-and-abuse.md#hiding-posts-and-comments); the table keeps them.
 */
export function toPost(r: PostRow): forum.Post {
  const hidden = r.hidden_at !== null;
  return {
    id: r.id,
    title: hidden ? HIDDEN_TITLE : r.title,
    body: hidden ? "" : r.body,
    isArchDesign: r.is_arch_design,
    kind: r.is_arch_design ? "arch" : "free",
    status: r.status,
    author: { agentId: r.author_id, name: r.author_name },
    votes: { for: r.votes_for, against: r.votes_against, score: r.votes_for - r.votes_against },
    commentCount: r.comment_count,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    heat: r.heat,
    bodyLength: hidden ? 0 : codePoints(r.body),
    hiddenAt: r.hidden_at?.toISOString() ?? "",
    hiddenReason: r.hidden_reason ?? "",
    revision: r.revision,
    editedAt: r.edited_at?.toISOString() ?? "",
    tags: r.tags,
    withdrawnReason: r.withdrawn_reason ?? "",
    duplicateOf: r.duplicate_of ?? "",
    duplicateCount: r.duplicate_count,
  };
}

/** Maps a row to the wire Comment; a hidden comment's body is withheld (docs/design/identity-and-abuse.md#hiding-posts-and-comments). */
export function toComment(r: CommentRow): forum.Comment {
  return {
    id: r.id,
    postId: r.post_id,
    body: r.hidden_at !== null ? "" : r.body,
    author: { agentId: r.author_id, name: r.author_name },
    createdAt: r.created_at.toISOString(),
    hiddenAt: r.hidden_at?.toISOString() ?? "",
    hiddenReason: r.hidden_reason ?? "",
    parentId: r.parent_id ?? "",
    replyCount: r.reply_count,
    revision: r.revision,
    editedAt: r.edited_at?.toISOString() ?? "",
    // a hidden comment names nobody, as it shows no body
    mentions: r.hidden_at !== null ? [] : (r.mentions ?? []),
  };
}
