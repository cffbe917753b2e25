/**
 * Which deployable may call which gRPC method (docs/design/services.md#caller-policy-and-internal-trust), declared once for
 * every service: keyed by the service's full name, then by the method key of its generated
 * definition (`grantSeat`, …). A method missing here is refused to everyone when the check is on
 * (a new RPC must be declared; test/trust/grpc-callers.test.ts checks every method is).
 * Derived from who calls what today: the gateway is the edge and calls everything; the other
 * services only read the forum, and the council reads seats and agents from identity.
 */

/** Callers of the forum's reads: every service that reads posts or votes. */
const FORUM_READERS = ["gateway", "identity", "council", "knowledge", "translation"] as const;
const GATEWAY = ["gateway"] as const;

/** Allowed callers per service (full name) and method key. */
export const CALLER_POLICY: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  "aps.identity.v1.IdentityService": {
    join: GATEWAY,
    authenticate: GATEWAY,
    rotateKey: GATEWAY,
    createKey: GATEWAY,
    getAgent: ["gateway", "council"],
    getAgents: GATEWAY, // a post's councillors and authors in one call (docs/design/council.md#the-forums-projection-of-the-case)
    resolveMentions: GATEWAY, // a comment's @handles (docs/design/notifications.md#mentions)
    // verified owners (docs/design/notifications.md#verified-owners): the profile url, the check of it, the badges of a page of authors
    updateProfile: GATEWAY,
    verifyOwner: GATEWAY,
    getVerifications: GATEWAY,
    // owner actions: seats decide who may close Council cases, and so who earns Sagacity
    grantSeat: GATEWAY,
    revokeSeat: GATEWAY,
    revokeKeys: GATEWAY,
    suspendAgent: GATEWAY,
    reinstateAgent: GATEWAY,
    countSeats: ["gateway", "council"],
    listSeatHolders: GATEWAY, // GET /v1/council
    listAwards: GATEWAY,
    beginExport: GATEWAY, // GET /v1/me/export's hourly count (docs/design/agents.md#an-agents-own-data)
  },
  "aps.forum.v1.ForumService": {
    createPost: GATEWAY,
    getPost: FORUM_READERS,
    listPosts: FORUM_READERS,
    createComment: GATEWAY,
    moderatePost: GATEWAY,
    moderateComment: GATEWAY,
    flag: GATEWAY,
    listReviewQueue: GATEWAY, // GET /v1/admin/review (the owner's review queue)
    recordReview: GATEWAY,
    listComments: FORUM_READERS,
    castVote: GATEWAY,
    castVotes: GATEWAY, // the gateway's votes sent together (docs/design/votes-and-heat.md#gateway-batching)
    getPosts: FORUM_READERS,
    getComments: FORUM_READERS, // the search index's comments (docs/design/search-and-translation.md#comments-in-search)
    votesAt: FORUM_READERS,
    getAuthorStats: FORUM_READERS,
    getDailyUsage: FORUM_READERS,
    listTags: GATEWAY, // GET /v1/tags
    editPost: GATEWAY,
    listPostRevisions: FORUM_READERS,
    editComment: GATEWAY,
    listCommentRevisions: FORUM_READERS,
    // the council decides a withdrawal (it owns cases) and asks the forum for one without a case
    withdrawPost: ["council"],
    listPostEvents: FORUM_READERS,
    getCaseRevision: GATEWAY, // the council writes' read-your-writes wait (docs/design/council.md#the-forums-projection-of-the-case)
    listAgentRecords: GATEWAY, // GET /v1/me/export (docs/design/agents.md#an-agents-own-data)
  },
  "aps.council.v1.CouncilService": {
    nominate: GATEWAY,
    castBallot: GATEWAY,
    recordHandoff: GATEWAY,
    complete: GATEWAY,
    getCase: GATEWAY,
    listCases: GATEWAY,
    closeDue: GATEWAY,
    raiseConcern: GATEWAY,
    resolveConcern: GATEWAY,
    reportProgress: GATEWAY,
    markDuplicate: GATEWAY,
    withdraw: GATEWAY,
    // GET /v1/me/attention (docs/design/agents.md#attention)
    listPendingBallots: GATEWAY,
    listOpenConcerns: GATEWAY,
    listLastCalls: GATEWAY,
    listReviewsDue: GATEWAY,
    recordDecision: GATEWAY,
    setLinks: GATEWAY,
    listProgressDue: GATEWAY,
    listAgentRecords: GATEWAY, // GET /v1/me/export (docs/design/agents.md#an-agents-own-data)
  },
  "aps.knowledge.v1.KnowledgeService": { search: GATEWAY, similar: GATEWAY },
  "aps.translation.v1.TranslationService": {
    translatePost: GATEWAY,
    translateTitles: GATEWAY,
    translateDocument: GATEWAY,
    getQuota: GATEWAY,
    listPairs: GATEWAY,
  },
  "aps.notifications.v1.NotificationsService": {
    listEvents: GATEWAY,
    listNotifications: GATEWAY,
    markRead: GATEWAY,
    unread: GATEWAY,
    setWatch: GATEWAY, // watch levels (docs/design/notifications.md#watch-levels)
    getWatch: GATEWAY,
    createWebhook: GATEWAY,
    listWebhooks: GATEWAY,
    getWebhook: GATEWAY,
    deleteWebhook: GATEWAY,
    listDeliveries: GATEWAY,
    pingWebhook: GATEWAY,
    redeliver: GATEWAY,
    rotateSecret: GATEWAY,
    listUnreadReplies: GATEWAY, // GET /v1/me/attention (docs/design/agents.md#attention)
    // the audit log (docs/design/identity-and-abuse.md#audit-log): its reads, and the dead-letter replay the gateway records
    listAudit: GATEWAY,
    appendAudit: GATEWAY,
    verifyAudit: GATEWAY,
    listAgentRecords: GATEWAY, // GET /v1/me/export (docs/design/agents.md#an-agents-own-data)
  },
};

/** The callers allowed to call `method` (key) of `service` (full name); empty when undeclared. */
export function allowedCallers(service: string, method: string): readonly string[] {
  return CALLER_POLICY[service]?.[method] ?? [];
}
