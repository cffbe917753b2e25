import { caseProjectionWaits, inDryRun, zeroSeries, type ForumClient, type Logger } from "@aps/platform";

// every result's series at 0 from the start: the dashboard reads 0, not "no data" (docs/observability.md "Dashboards")
zeroSeries(caseProjectionWaits, { result: ["reached", "late", "failed"] });

/** The longest a council write waits for the forum's projection of its case, ms (docs/design/council.md#the-forums-projection-of-the-case). */
export const PROJECTION_WAIT_MS = 2_000;

/**
 * The pauses between two looks at the forum's projection, ms: growing from 3 to 50, then 50 each
 * (a look is one primary-key read). The projection typically lands a few ms (in-process bus) to a
 * few tens of ms (JetStream's pull consumer) after the commit, so the steps stay fine there.
 */
const BACKOFF_MS = [3, 5, 8, 12, 16, 20, 25, 30, 40, 50];

/**
 * Read-your-writes after a council write (docs/design/council.md#the-forums-projection-of-the-case decision 4): resolves once the
 * forum's projection of post `postId`'s case holds `revision` (the write's `Case.revision`) or a
 * newer one, looking with forum `GetCaseRevision` (one primary-key read) at once and then after
 * pauses growing from 3 to 50 ms, for at most `maxWaitMs` (2 s) in all. A projection still behind
 * then, or a forum that does not answer, is not an error — the write is committed and the post's
 * read shows it a moment later — so it resolves anyway, logged (warn) and counted in
 * `aps_case_projection_waits_total{result="late"|"failed"}` (`"reached"` otherwise). Resolves the
 * result. `revision` 0 (a council from before revisions), or a dry run, resolves at once as reached.
 */
export async function awaitCaseProjection(
  forum: Pick<ForumClient, "getCaseRevision">,
  postId: string,
  revision: number,
  log?: Logger,
  maxWaitMs = PROJECTION_WAIT_MS,
): Promise<"reached" | "late" | "failed"> {
  // a dry run's write is never projected: nothing to wait for (docs/design/edge.md#dry-run)
  if (inDryRun()) return "reached";
  const started = Date.now();
  let result: "reached" | "late" | "failed" = "late";
  try {
    for (let i = 0; ; i++) {
      if (revision <= 0 || (await forum.getCaseRevision({ postId })).revision >= revision) {
        result = "reached";
        break;
      }
      const left = maxWaitMs - (Date.now() - started);
      if (left <= 0) break;
      const pause = Math.min(BACKOFF_MS[Math.min(i, BACKOFF_MS.length - 1)]!, left);
      await new Promise((r) => setTimeout(r, pause));
    }
  } catch (err) {
    result = "failed";
    log?.warn({ postId, revision, err: String(err) }, "could not read the forum's case projection; answering anyway");
  }
  caseProjectionWaits.inc({ result });
  if (result === "late")
    log?.warn(
      { postId, revision, waitedMs: Date.now() - started },
      "the forum's case projection did not reach the write's revision in time; answering anyway",
    );
  return result;
}
