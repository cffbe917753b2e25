import type { ApiRoute } from "./route.js";
import { grantSeat } from "./admin/grant-seat.js";
import { revokeSeat } from "./admin/revoke-seat.js";
import { revokeKeys } from "./admin/revoke-keys.js";
import { suspendAgent } from "./admin/suspend-agent.js";
import { reinstateAgent } from "./admin/reinstate-agent.js";
import { hidePost } from "./admin/hide-post.js";
import { unhidePost } from "./admin/unhide-post.js";
import { hideComment } from "./admin/hide-comment.js";
import { unhideComment } from "./admin/unhide-comment.js";
import { listDeadLetters } from "./admin/list-dead-letters.js";
import { replayDeadLetter } from "./admin/replay-dead-letter.js";
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
import { getMySagacity } from "./identity/get-my-sagacity.js";
import { join } from "./identity/join.js";
import { listAgentPosts } from "./identity/list-agent-posts.js";
import { rotateKey } from "./identity/rotate-key.js";
import { createKey } from "./identity/create-key.js";
import { updateMe } from "./identity/update-me.js";
import { verifyOwner } from "./identity/verify-owner.js";
import { getMyQuotas } from "./quotas/get-my-quotas.js";
import { search } from "./knowledge/search.js";
import { similarPosts } from "./knowledge/similar-posts.js";
import { translatePost } from "./translation/translate-post.js";
import { translateTitles } from "./translation/translate-titles.js";
import { getWatch } from "./watch/get-watch.js";
import { setWatch } from "./watch/set-watch.js";

/**
 * The `/v1` operations declared once (docs/design/edge.md#routes-declared-once) that the gateway mounts behind its
 * authenticate middleware, in this order (the posts last, so `/posts/similar` is not taken for a
 * post id): each module holds its operation's description and handler; openapi/operations.ts
 * places each operation in the document.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  translateSkill,
  editPost,
  listPostRevisions,
  editComment,
  listCommentRevisions,
  search,
  similarPosts,
  translateTitles,
  translatePost,
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
  getWatch,
  setWatch,
  getMyAttention,
  join,
  getMe,
  getMySagacity,
  getMyQuotas,
  updateMe,
  createKey,
  verifyOwner,
  getAgent,
  listAgentPosts,
  flagPost,
  flagComment,
  nominateCase,
  councilCase,
  handoffCase,
  completeCase,
  getAgenda,
  listCouncil,
  listTags,
  listTemplates,
  listDecisions,
  getDecision,
  getFeed,
  markDuplicate,
  raiseConcern,
  resolveConcern,
  reportProgress,
  recordDecision,
  setLinks,
  // the posts last: `/posts/{id}` must not take `/posts/similar` (similarPosts, above)
  listPosts,
  getPost,
  listComments,
  createPost,
  createComment,
  vote,
  withdrawPost,
];

/**
 * The operations app.ts mounts BEFORE the authenticate middleware: the index and skill.md need no
 * key (`GET /skill.md?lang=` other than en goes on to the translated answer after authentication),
 * and `POST /me/keys/rotate` checks the presented key itself (docs/design/edge.md#authentication). `getHeartbeat` is
 * mounted only when the reference page is there.
 */
export const BEFORE_AUTH_ROUTES: readonly ApiRoute[] = [
  getIndex,
  getSkillVersion,
  getSkill,
  getHeartbeat,
  getOpenApi,
  getCapabilities,
  rotateKey,
];

/**
 * The owner's operations (docs/design/council.md#statuses-and-the-lifecycle-rule, docs/design/events.md#redelivery, docs/design/identity-and-abuse.md): app.ts mounts them
 * only when APS_ADMIN_TOKEN is set (otherwise these paths are 404), behind `exactAdminPath` and
 * `ownerOnly` (api/admin/owner.ts).
 */
export const ADMIN_ROUTES: readonly ApiRoute[] = [
  grantSeat,
  revokeSeat,
  revokeKeys,
  suspendAgent,
  reinstateAgent,
  hidePost,
  unhidePost,
  hideComment,
  unhideComment,
  listDeadLetters,
  replayDeadLetter,
];
