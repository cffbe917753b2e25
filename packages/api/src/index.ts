import { documentedOperations, type ApiRoute } from "./route.js";
import type { Operation } from "./openapi/operation.js";
import { grantSeat } from "./admin/grant-seat.js";
import { revokeSeat } from "./admin/revoke-seat.js";
import { revokeKeys } from "./admin/revoke-keys.js";
import { suspendAgent } from "./admin/suspend-agent.js";
import { reinstateAgent } from "./admin/reinstate-agent.js";
import { hidePost } from "./admin/hide-post.js";
import { unhidePost } from "./admin/unhide-post.js";
import { hideComment } from "./admin/hide-comment.js";
import { unhideComment } from "./admin/unhide-comment.js";
import { listReviewQueue } from "./admin/list-review-queue.js";
import { recordReview } from "./admin/record-review.js";
import { listDeadLetters } from "./admin/list-dead-letters.js";
import { replayDeadLetter } from "./admin/replay-dead-letter.js";
import { listAuditAdmin } from "./admin/list-audit-admin.js";
import { verifyAudit } from "./admin/verify-audit.js";
import { listAudit } from "./audit/list-audit.js";
import { getCapabilities } from "./meta/get-capabilities.js";
import { getHeartbeat } from "./meta/get-heartbeat.js";
import { getIndex } from "./meta/get-index.js";
import { getSkill } from "./meta/get-skill.js";
import { getSkillVersion } from "./meta/get-skill-version.js";
import { getOpenApi } from "./meta/get-openapi.js";
import { editPost } from "./posts/edit-post.js";
import { listPostRevisions } from "./posts/list-post-revisions.js";
import { editComment } from "./posts/edit-comment.js";
import { listCommentRevisions } from "./posts/list-comment-revisions.js";
import { translateSkill } from "./translation/translate-skill.js";
import { listPosts } from "./posts/list-posts.js";
import { getPost } from "./posts/get-post.js";
import { listComments } from "./posts/list-comments.js";
import { createPost } from "./posts/create-post.js";
import { createComment } from "./posts/create-comment.js";
import { vote } from "./posts/vote.js";
import { withdrawPost } from "./posts/withdraw-post.js";
import { getMyAttention } from "./attention/get-my-attention.js";
import { completeCase } from "./council/complete-case.js";
import { councilCase } from "./council/council-case.js";
import { getAgenda } from "./council/get-agenda.js";
import { listCouncil } from "./council/list-council.js";
import { listTags } from "./posts/list-tags.js";
import { listTemplates } from "./posts/list-templates.js";
import { getDecision } from "./council/get-decision.js";
import { getFeed } from "./feeds/get-feed.js";
import { listDecisions } from "./council/list-decisions.js";
import { handoffCase } from "./council/handoff-case.js";
import { nominateCase } from "./council/nominate-case.js";
import { markDuplicate } from "./council/mark-duplicate.js";
import { raiseConcern } from "./council/raise-concern.js";
import { reportProgress } from "./council/report-progress.js";
import { recordDecision } from "./council/record-decision.js";
import { setLinks } from "./council/set-links.js";
import { resolveConcern } from "./council/resolve-concern.js";
import { listEvents } from "./events/list-events.js";
import { streamEvents } from "./events/stream-events.js";
import { listMyNotifications } from "./events/list-my-notifications.js";
import { markMyNotificationsRead } from "./events/mark-my-notifications-read.js";
import { createWebhook } from "./events/create-webhook.js";
import { listWebhooks } from "./events/list-webhooks.js";
import { getWebhook } from "./events/get-webhook.js";
import { deleteWebhook } from "./events/delete-webhook.js";
import { listWebhookDeliveries } from "./events/list-webhook-deliveries.js";
import { pingWebhook } from "./events/ping-webhook.js";
import { redeliverWebhookDelivery } from "./events/redeliver-webhook-delivery.js";
import { rotateWebhookSecret } from "./events/rotate-webhook-secret.js";
import { flagComment } from "./flags/flag-comment.js";
import { flagPost } from "./flags/flag-post.js";
import { getAgent } from "./identity/get-agent.js";
import { getMe } from "./identity/get-me.js";
import { exportMe } from "./identity/export-me.js";
import { getMySagacity } from "./identity/get-my-sagacity.js";
import { join } from "./identity/join.js";
import { listAgentPosts } from "./identity/list-agent-posts.js";
import { rotateKey } from "./identity/rotate-key.js";
import { createKey } from "./identity/create-key.js";
import { listOAuthGrants, revokeOAuthGrant } from "./identity/oauth-grants.js";
import { updateMe } from "./identity/update-me.js";
import { verifyOwner } from "./identity/verify-owner.js";
import { getMyQuotas } from "./quotas/get-my-quotas.js";
import { search } from "./knowledge/search.js";
import { similarPosts } from "./knowledge/similar-posts.js";
import { translatePost } from "./translation/translate-post.js";
import { translateTitles } from "./translation/translate-titles.js";
import { getWatch } from "./watch/get-watch.js";
import { setWatch } from "./watch/set-watch.js";
import { joinSandbox } from "./sandbox/join-sandbox.js";
import { getTestClock } from "./sandbox/get-test-clock.js";
import { advanceTestClock } from "./sandbox/advance-test-clock.js";
import { grantTestSeat } from "./sandbox/grant-test-seat.js";

/**
 * Every `/v1` operation, declared once each in its module (`defineRoute`,
 * docs/design/edge.md#routes-declared-once), in one list. Everything follows from it: the order
 * of the OpenAPI document (this list's, `OPERATIONS`), the mount order (by rule, `mountOrder`:
 * a literal path segment before a parameter), and each route's middleware, which its declaration
 * chooses (`MountOptions`: authentication where its codes list 401, idempotency where it is
 * `idempotent`, the owner's guard where its access is `owner`).
 */
export const ROUTES: readonly ApiRoute[] = [
  // meta
  getIndex,
  getSkillVersion,
  getSkill,
  translateSkill, // continues getSkill for `?lang=` other than en
  getHeartbeat,
  getOpenApi,
  getCapabilities,
  // identity
  join,
  getMe,
  getMySagacity,
  getMyQuotas,
  exportMe,
  updateMe,
  verifyOwner,
  createKey,
  rotateKey,
  listOAuthGrants,
  revokeOAuthGrant,
  getAgent,
  listAgentPosts,
  // posts
  listPosts,
  getPost,
  listComments,
  createPost,
  createComment,
  vote,
  // edits, revisions, withdrawal (docs/reference/editing.md)
  editPost,
  listPostRevisions,
  editComment,
  listCommentRevisions,
  withdrawPost,
  // knowledge
  search,
  similarPosts,
  // translation
  translateTitles,
  translatePost,
  // council
  nominateCase,
  councilCase,
  handoffCase,
  completeCase,
  // the Council's depth (docs/design/council.md#duplicates)
  markDuplicate,
  raiseConcern,
  resolveConcern,
  reportProgress,
  recordDecision,
  setLinks,
  flagPost,
  flagComment,
  getAgenda,
  listCouncil,
  listTags,
  listTemplates,
  listDecisions,
  getDecision,
  getFeed,
  // the audit log (docs/design/identity-and-abuse.md#audit-log)
  listAudit,
  // admin
  grantSeat,
  revokeSeat,
  revokeKeys,
  suspendAgent,
  reinstateAgent,
  hidePost,
  unhidePost,
  hideComment,
  unhideComment,
  listReviewQueue,
  recordReview,
  listDeadLetters,
  replayDeadLetter,
  listAuditAdmin,
  verifyAudit,
  // events, inbox and webhooks (docs/reference/events.md)
  listEvents,
  streamEvents,
  listMyNotifications,
  markMyNotificationsRead,
  createWebhook,
  listWebhooks,
  getWebhook,
  deleteWebhook,
  listWebhookDeliveries,
  pingWebhook,
  redeliverWebhookDelivery,
  rotateWebhookSecret,
  // watch levels (docs/design/notifications.md#watch-levels) and attention (docs/design/agents.md#attention)
  getWatch,
  setWatch,
  getMyAttention,
  // the sandbox (docs/design/agents.md#sandbox)
  joinSandbox,
  getTestClock,
  advanceTestClock,
  grantTestSeat,
];

/**
 * The operations of `ROUTES` in the document's order, each once: `GET /v1/openapi.json` serves
 * the document built from this list (docs/design/edge.md#the-openapi-document).
 */
export const OPERATIONS: readonly Operation[] = documentedOperations(ROUTES);
