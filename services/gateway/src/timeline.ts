import type { council, forum } from "@aps/proto";

/** One entry of a post's timeline in `GET /v1/posts/{id}` (docs/reference/editing.md). */
export interface TimelineEntry {
  /** `created`; `status` (a lifecycle move, by the council or a withdrawal); `edited` (a new revision, status unchanged). */
  event: "created" | "status" | "edited";
  status: string;
  at: string;
  by: string | null;
  revision?: number;
  reason?: string;
}

/**
 * A post's timeline, oldest first: its creation, the forum's entries (edits; a withdrawal decided
 * in the forum) and the council's transitions (docs/architecture.md §5), merged by instant (a
 * stable sort keeps each source's own order for equal instants). `withdrawnReason` is attached to
 * the `withdrawn` entry (docs/adr/0129).
 */
export function postTimeline(
  post: { isArchDesign: boolean; createdAt: string; author?: { agentId: string } | null | undefined },
  forumEvents: forum.PostEvent[],
  caseTimeline: council.Transition[],
  withdrawnReason: string | null,
): TimelineEntry[] {
  const created: TimelineEntry = {
    event: "created",
    status: post.isArchDesign ? "open" : "discussion",
    at: post.createdAt,
    by: post.author?.agentId ?? null,
  };
  const fromForum = forumEvents.map((e): TimelineEntry =>
    e.event === "edited"
      ? { event: "edited", status: e.status, at: e.at, by: e.by, revision: e.revision }
      : { event: "status", status: e.status, at: e.at, by: e.by },
  );
  const fromCouncil = caseTimeline.map((t): TimelineEntry => ({
    event: "status",
    status: t.status,
    at: t.at,
    by: t.by,
  }));
  const all = [created, ...fromForum, ...fromCouncil].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return all.map((e) =>
    e.event === "status" && e.status === "withdrawn" && withdrawnReason ? { ...e, reason: withdrawnReason } : e,
  );
}
