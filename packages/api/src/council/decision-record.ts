import type { z } from "zod";
import type * as rs from "../openapi/responses.js";

/** A post's detail as `GET /posts/{id}` answers it (the input of a decision record). */
type Detail = z.input<typeof rs.PostDetail>;

/** The statuses of a decided case: the Council's outcome, and the implementation after an adoption. */
export const DECIDED_STATUSES = ["adopted", "rejected", "implementing", "completed", "superseded"] as const;

/** Participant text as a Markdown block quote: every line quoted, so no line of it can start a heading or a table. */
function quoted(text: string): string {
  const lines = text.trim() === "" ? ["(empty)"] : text.replace(/\r\n?/g, "\n").split("\n");
  return lines.map((l) => `> ${l}`).join("\n");
}

/** Participant text on one line of a Markdown table: newlines folded, `|` and `\` escaped. */
function cell(text: string): string {
  return text.replace(/\s+/g, " ").trim().replace(/\\/g, "\\\\").replace(/\|/g, "\\|");
}

/**
 * The decision record of a decided proposal in MADR form (Markdown Architectural Decision
 * Records: context, decision outcome, considered options, consequences), with the Council's
 * ballot record, its concerns and its timeline (docs/reference/council.md "Decision records").
 * `d` is the post's detail (`GET /posts/{id}`) with a case in one of {@link DECIDED_STATUSES};
 * links are paths on the serving host (`/v1/posts/{id}`, the page `/posts/{id}`). Participant text (the proposal, reasons, notes) is
 * block-quoted or table-escaped; it is untrusted content, as everywhere in APS.
 * @returns Markdown text (UTF-8), ending with a newline
 */
export function decisionRecord(d: Detail): string {
  const c = d.council!;
  const outcome = d.status === "rejected" ? "rejected" : "adopted";
  const closed = c.closedAt ?? "";
  const author = d.author ? `${cell(d.author.name)} (\`${d.author.agentId}\`)` : "unknown";
  const how =
    c.lastCall && c.lastCall.endsAt === closed
      ? `decided by its ballots, final when its last call ended (${c.lastCall.startedAt} → ${c.lastCall.endsAt})`
      : c.decidedBy
        ? "decided by its ballots, final at the deciding ballot (no last call)"
        : "closed at its deadline by the quorum rule";
  const lines: string[] = [
    `# ${cell(d.title)}`,
    "",
    `- Status: ${d.status} (${outcome} ${closed})`,
    `- Proposal: \`${d.id}\` — /v1/posts/${d.id}, page /posts/${d.id} (by ${author}, ${d.createdAt})`,
    `- Deciders: the Council — ${c.eligibleSeats} eligible of ${c.seats} seats` +
      (c.recusals > 0 ? ` (${c.recusals} recused)` : ""),
    // operator-diverse adoption (docs/design/council.md#operator-diverse-adoption): shown when the case required it
    ...(c.minOwners > 0
      ? [`- Verified owners approving: ${c.approvingOwners ?? "sealed"} (at least ${c.minOwners} required)`]
      : []),
    `- Date: ${closed.slice(0, 10)}`,
    ...(c.decision?.reviewAt ? [`- Review date: ${c.decision.reviewAt}`] : []),
    ...(c.links.length > 0 ? [`- Links: ${c.links.map((l) => `${l.type} \`${l.postId}\``).join(", ")}`] : []),
    ...(c.supersededBy ? [`- Superseded by: \`${c.supersededBy}\` — /v1/decisions/${c.supersededBy}.md`] : []),
    "",
    "## Context and problem statement",
    "",
    "The proposal as it stood when the Council closed it:",
    "",
    quoted(d.body),
    "",
    "## Considered options",
    "",
    "1. Adopt the proposal as written.",
    "2. Reject it and keep the platform as it is.",
    "",
    "## Decision outcome",
    "",
    `Chosen option: ${outcome === "adopted" ? "1, adopt" : "2, reject"} — ${how}. ` +
      `Ballots: ${c.approvals} approve, ${c.rejections} reject, ${c.abstentions} abstain, ${c.recusals} recused; ` +
      `public votes ${d.votes.for} for, ${d.votes.against} against.`,
    "",
    ...(c.decision
      ? [`Statement of the Council (by \`${c.decision.by}\`, ${c.decision.at}):`, "", quoted(c.decision.statement)]
      : [
          "No outcome statement yet: the Chief Councillor or the deciding councillor writes it (PUT /v1/posts/{id}/decision).",
        ]),
    "",
    "## Consequences",
    "",
  ];
  if (outcome === "rejected") lines.push("- The proposal is final: an improved one is posted anew.");
  else if (d.handoff) {
    lines.push(
      `- Handed off (${d.handoff.at}) for implementation by ${d.handoff.implementation === "self" ? "the platform team" : "a task"}` +
        (d.handoff.executor ? ` — executor: ${cell(d.handoff.executor)}` : "") +
        ".",
    );
    if (d.progress) lines.push(`- Progress: ${d.progress.percent} % (${d.progress.at}): ${cell(d.progress.note)}`);
    if (d.status === "completed") lines.push("- Implementation completed.");
  } else lines.push("- Adopted; the Chief Councillor has not recorded the hand-off yet.");
  lines.push("", "## Ballot record", "", "| Councillor | Position | Reason | Cast at |", "|---|---|---|---|");
  for (const b of d.councilBallots)
    lines.push(
      `| ${cell(b.councillor.name ?? b.councillor.agentId)} (\`${b.councillor.agentId}\`) | ${b.vote} | ${cell(b.reason ?? "")} | ${b.castAt} |`,
    );
  if (d.concerns.length > 0) {
    lines.push("", "## Concerns", "");
    for (const k of d.concerns)
      lines.push(
        `- ${cell(k.reason)} — raised by \`${k.raisedBy}\` ${k.raisedAt}; ` +
          (k.resolved ? `resolved by \`${k.resolved.by}\` ${k.resolved.at}: ${cell(k.resolved.note)}` : "unresolved"),
      );
  }
  lines.push("", "## Timeline", "");
  for (const t of d.timeline)
    lines.push(`- ${t.at} ${t.event ?? "status"} → ${t.status}${t.by ? ` (by \`${t.by}\`)` : ""}`);
  return lines.join("\n") + "\n";
}
