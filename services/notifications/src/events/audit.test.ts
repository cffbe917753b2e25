import { events } from "@aps/proto";
import { AUDIT_RULES } from "./audit.js";

/**
 * The entries the audit consumer derives from events (docs/design/identity-and-abuse.md#audit-log):
 * owner actions private, Council actions public, `before`/`after` only the changed fields, a
 * sealed case's ballot flagged sealed (a recusal never), a hide by flags by `system`.
 */
describe("AUDIT_RULES", () => {
  it("records a suspension, a repeated one and a reinstatement with the reason before and after", () => {
    const rule = AUDIT_RULES["identity.access_changed"]!;
    const base = events.AccessChanged.fromPartial({ agentId: "ext_A" });
    expect(rule({ ...base, change: "suspended", reason: "spam" })).toEqual({
      actor: "owner",
      action: "agent.suspended",
      targetType: "agent",
      targetId: "ext_A",
      before: { suspended: false, suspendedReason: null },
      after: { suspended: true, suspendedReason: "spam" },
      reason: "spam",
      visibility: "private",
      sealed: false,
    });
    expect(rule({ ...base, change: "suspended", reason: "worse", previousReason: "spam" }).before).toEqual({
      suspended: true,
      suspendedReason: "spam",
    });
    expect(rule({ ...base, change: "reinstated", previousReason: "spam" })).toMatchObject({
      action: "agent.reinstated",
      before: { suspended: true, suspendedReason: "spam" },
      after: { suspended: false, suspendedReason: null },
    });
    expect(rule({ ...base, change: "keys_revoked" })).toMatchObject({
      action: "keys.revoked",
      after: { keysRevoked: true },
    });
  });

  it("records hides by the owner and by flags, private", () => {
    const rule = AUDIT_RULES["forum.post_moderated"]!;
    const m = events.PostModerated.fromPartial({
      postId: "p_1",
      commentId: "c_1",
      hidden: true,
      by: "owner",
      reason: "abuse",
    });
    expect(rule(m)).toMatchObject({
      actor: "owner",
      action: "comment.hidden",
      targetType: "comment",
      targetId: "c_1",
      before: { hidden: false, hiddenReason: null },
      after: { hidden: true, hiddenReason: "abuse" },
      visibility: "private",
    });
    expect(rule({ ...m, commentId: "", by: "system" })).toMatchObject({
      actor: "system",
      action: "post.hidden",
      targetId: "p_1",
    });
    expect(rule({ ...m, commentId: "", hidden: false, reason: "", previousReason: "abuse" })).toMatchObject({
      action: "post.unhidden",
      before: { hidden: true, hiddenReason: "abuse" },
      after: { hidden: false, hiddenReason: null },
    });
  });

  it("records a ballot publicly with the position before it, sealed in a sealed case unless a recusal", () => {
    const rule = AUDIT_RULES["council.ballot_cast"]!;
    const m = events.BallotCast.fromPartial({
      postId: "p_1",
      councillorId: "ext_C",
      vote: "abstain",
      previousVote: "reject",
      reason: "On reflection.",
      sealing: "until_closed",
    });
    expect(rule(m)).toEqual({
      actor: "ext_C",
      action: "ballot.cast",
      targetType: "post",
      targetId: "p_1",
      before: { vote: "reject" },
      after: { vote: "abstain" },
      reason: "On reflection.",
      visibility: "public",
      sealed: true,
    });
    expect(rule({ ...m, vote: "recuse" }).sealed).toBe(false);
    expect(rule({ ...m, sealing: "off", previousVote: "" })).toMatchObject({ sealed: false, before: { vote: null } });
  });

  it("records every audited Council event as public", () => {
    for (const [type, rule] of Object.entries(AUDIT_RULES))
      if (type.startsWith("council."))
        expect([type, (rule as (m: unknown) => { visibility: string })({ by: "ext_C" }).visibility]).toEqual([
          type,
          "public",
        ]);
  });
});
