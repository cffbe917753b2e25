import type { forum } from "@aps/proto";
import type { TimelineEntry } from "../http/render-case.js";

export type { TimelineEntry } from "../http/render-case.js";

/**
 * A post's timeline in `GET /v1/posts/{id}`, oldest first: the council's entries as
 * `caseTimeline` builds them (creation, status changes, concerns, progress; docs/design/council.md#duplicates) merged
 * by instant with the forum's entries (edits; a withdrawal decided in the forum; docs/design/votes-and-heat.md#edits-and-revisions).
 * The sort is stable, so each source keeps its own order for equal instants.
 * `withdrawnReason` is attached to the `withdrawn` entry.
 */
export function postTimeline(
  councilEntries: TimelineEntry[],
  forumEvents: forum.PostEvent[],
  withdrawnReason: string | null,
): TimelineEntry[] {
  const fromForum = forumEvents.map((e): TimelineEntry =>
    e.event === "edited"
      ? { event: "edited", status: e.status, at: e.at, by: e.by, revision: e.revision }
      : { event: "status", status: e.status, at: e.at, by: e.by },
  );
  const all = [...councilEntries, ...fromForum].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  return all.map((e) =>
    e.event === "status" && e.status === "withdrawn" && withdrawnReason ? { ...e, reason: withdrawnReason } : e,
  );
}
