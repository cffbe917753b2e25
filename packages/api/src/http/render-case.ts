import type { council } from "@aps/proto";

/**
 * JSON of the Council's case records (docs/reference/moderation-and-council-depth.md, docs/design/council.md#duplicates):
 * concerns, implementation progress, duplicates, and the timeline that interleaves them with the
 * status changes.
 */

/** Public JSON of a concern; `resolved` is null while it blocks. */
export function renderConcern(k: council.Concern) {
  return {
    id: k.id,
    raisedBy: k.raisedBy,
    reason: k.reason,
    raisedAt: k.raisedAt,
    resolved: k.resolvedAt ? { by: k.resolvedBy, at: k.resolvedAt, note: k.resolveNote } : null,
  };
}

/** Public JSON of one progress update. */
export function renderProgress(p: council.ProgressUpdate) {
  return { percent: p.percent, note: p.note, by: p.by, at: p.at };
}

/** One timeline entry: a status change, a concern raised or resolved, or a progress update. */
export interface TimelineEntry {
  /**
   * "created"; "status" for a status change (by the council or a withdrawal); "edited" (a new
   * revision, status unchanged; docs/design/votes-and-heat.md#edits-and-revisions); otherwise the council depth record (docs/design/council.md#duplicates).
   */
  event: "created" | "status" | "edited" | "concern_raised" | "concern_resolved" | "progress";
  /** The post's status after the entry. */
  status: string;
  at: string;
  by: string | null;
  concernId?: string;
  note?: string;
  percent?: number;
  duplicateOf?: string;
  openConcerns?: string[];
  /** event "edited": the new revision. */
  revision?: number;
  /** status "withdrawn": the author's reason. */
  reason?: string;
}

/**
 * The case's timeline (`c` undefined: none): its status changes, concerns and progress updates in
 * time order, each entry carrying the status it left the post in. On a tie (one transaction) the
 * concern or progress entry comes first: resolving the last concern is what closes the case.
 */
export function caseTimeline(c: council.Case | undefined, start?: TimelineEntry): TimelineEntry[] {
  const entries: TimelineEntry[] = start ? [start] : [];
  if (!c) return entries;
  const rank = (e: TimelineEntry) => (e.event === "status" ? 1 : 0);
  const items: TimelineEntry[] = [
    ...c.timeline.map((t): TimelineEntry => ({
      event: "status",
      status: t.status,
      at: t.at,
      by: t.by,
      ...(t.status === "duplicate" && c.duplicateOf ? { duplicateOf: c.duplicateOf } : {}),
      ...(t.openConcerns.length ? { openConcerns: t.openConcerns } : {}),
    })),
    ...c.concerns.flatMap((k): TimelineEntry[] => [
      { event: "concern_raised", status: "", at: k.raisedAt, by: k.raisedBy, concernId: k.id, note: k.reason },
      ...(k.resolvedAt
        ? [
            {
              event: "concern_resolved" as const,
              status: "",
              at: k.resolvedAt,
              by: k.resolvedBy,
              concernId: k.id,
              note: k.resolveNote,
            },
          ]
        : []),
    ]),
    ...c.progress.map((p): TimelineEntry => ({
      event: "progress",
      status: "",
      at: p.at,
      by: p.by,
      percent: p.percent,
      note: p.note,
    })),
  ];
  // A stable sort keeps each source's own order for equal instants.
  items.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : rank(a) - rank(b)));
  let status = start?.status ?? "";
  for (const e of items) {
    if (e.event === "status") status = e.status;
    else e.status = status;
    entries.push(e);
  }
  return entries;
}

/** The record fields of a case's JSON (docs/design/council.md#duplicates): concerns, progress (latest and every update), duplicateOf. */
export function caseRecords(c: council.Case) {
  const last = c.progress[c.progress.length - 1];
  return {
    concerns: c.concerns.map(renderConcern),
    openConcerns: c.concerns.filter((k) => !k.resolvedAt).length,
    progress: last ? renderProgress(last) : null,
    progressUpdates: c.progress.map(renderProgress),
    duplicateOf: c.duplicateOf || null,
  };
}
