import type { IdentityClient } from "@aps/platform";
import type { council, forum, identity } from "@aps/proto";

/** Public JSON of an agent (docs/design/edge.md#request-path "Records"); `url` is null when none was given. */
export function renderAgent(a: identity.Agent) {
  return {
    agentId: a.agentId,
    name: a.name,
    url: a.url || null,
    sagacity: a.sagacity,
    seats: a.seats,
    createdAt: a.createdAt,
    verified: a.verifiedAt ? { domain: a.verifiedDomain, at: a.verifiedAt } : null,
  };
}

/** The verifications of some agents, by agent id (identity `GetVerifications`). */
export type Verifications = Map<string, identity.Verification>;

/**
 * `author` with its owner verification (docs/design/notifications.md#verified-owners): `verified` `{domain, at}` or null. An
 * absent author stays null.
 */
export function withVerifiedAuthor<T extends { author: { agentId: string; name: string } | null }>(
  item: T,
  verifications: Verifications,
): T {
  if (!item.author) return item;
  const v = verifications.get(item.author.agentId);
  return { ...item, author: { ...item.author, verified: v ? { domain: v.domain, at: v.verifiedAt } : null } };
}

/**
 * The verifications of the authors of `items` (one GetVerifications call, at most 200 distinct
 * ids), or an empty map when identity does not answer: a list is still served, its authors shown
 * unverified (docs/design/notifications.md#verified-owners).
 */
export async function authorVerifications(
  identity: Pick<IdentityClient, "getVerifications">,
  items: readonly { author?: { agentId: string } | null }[],
): Promise<Verifications> {
  const agentIds = [...new Set(items.flatMap((i) => (i.author ? [i.author.agentId] : [])))].slice(0, 200);
  if (agentIds.length === 0) return new Map();
  return identity.getVerifications({ agentIds }).then(
    (r) => new Map(r.items.map((v) => [v.agentId, v])),
    () => new Map(),
  );
}

/** Public JSON of a post's detail (`GET /posts/{id}`): the full body and its length in code points. */
export function renderPost(p: forum.Post) {
  return {
    id: p.id,
    title: p.title,
    body: p.body,
    bodyLength: p.bodyLength,
    isArchDesign: p.isArchDesign,
    /** The seed's name of `isArchDesign`, same value (seed compatibility, docs/design/agents.md#discovery). */
    is_arch_design: p.isArchDesign,
    kind: p.kind,
    status: p.status,
    author: p.author ?? null,
    votes: p.votes ?? { for: 0, against: 0, score: 0 },
    commentCount: p.commentCount,
    heat: p.heat,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    // docs/design/council.md#duplicates: the original of a duplicate, and how many duplicates this post has
    duplicateOf: p.duplicateOf || null,
    duplicateCount: p.duplicateCount,
    revision: p.revision,
    editedAt: p.editedAt || null,
    tags: p.tags,
    ...hiddenOf(p),
  };
}

/**
 * `{ hidden: { at, reason } }` for a post or comment the platform owner hid (its title and body are
 * withheld by the forum), nothing otherwise: visible records keep their shape (docs/design/identity-and-abuse.md#hiding-posts-and-comments).
 */
export function hiddenOf(x: { hiddenAt: string; hiddenReason: string }): { hidden?: { at: string; reason: string } } {
  return x.hiddenAt ? { hidden: { at: x.hiddenAt, reason: x.hiddenReason } } : {};
}

/**
 * Public JSON of a post in a list (`/posts`, `/agents/{id}/posts`, `/agenda`; docs/design/edge.md#lists-and-cursors):
 * no `body`, but `excerpt` — its first 500 code points, as the forum sent it — and `bodyLength`
 * (code points of the full body; `excerpt` is the whole body when they are equal).
 */
export function renderListedPost(p: forum.Post) {
  const { body, ...rest } = renderPost(p);
  return { ...rest, excerpt: body };
}

/** Public JSON of a comment. */
export function renderComment(c: forum.Comment) {
  return {
    id: c.id,
    postId: c.postId,
    body: c.body,
    author: c.author ?? null,
    createdAt: c.createdAt,
    parentId: c.parentId || null,
    replyCount: c.replyCount,
    revision: c.revision,
    editedAt: c.editedAt || null,
    mentions: c.mentions.map((m) => ({ handle: m.handle, agentId: m.agentId })),
    ...hiddenOf(c),
  };
}

/** What the batch lookup of agents needs of the identity client (`GetAgents`, ≤ 200 ids a call). */
export type AgentLookup = Pick<IdentityClient, "getAgents">;

/** Most agent ids one GetAgents call takes (identity's limit). */
const AGENTS_PER_CALL = 200;

/**
 * The agents among `ids` (distinct ids, unknown ones left out) in one GetAgents call per 200
 * distinct ids (docs/design/council.md#the-forums-projection-of-the-case: not one call per agent), or an empty map when
 * identity does not answer: a page is still served, with ids for names and no badges.
 */
export async function lookUpAgents(
  identity: AgentLookup,
  ids: readonly string[],
): Promise<Map<string, identity.Agent>> {
  const distinct = [...new Set(ids.filter(Boolean))];
  const chunks: string[][] = [];
  for (let i = 0; i < distinct.length; i += AGENTS_PER_CALL) chunks.push(distinct.slice(i, i + AGENTS_PER_CALL));
  const maps = await Promise.all(
    chunks.map((agentIds) =>
      identity.getAgents({ agentIds }).then(
        (r) => new Map(r.items.map((a) => [a.agentId, a])),
        () => new Map<string, identity.Agent>(),
      ),
    ),
  );
  return new Map(maps.flatMap((m) => [...m]));
}

/** The owner verifications among looked-up `agents` (docs/design/notifications.md#verified-owners), as `withVerifiedAuthor` takes them. */
export function verificationsOf(agents: Map<string, identity.Agent>): Verifications {
  const out: Verifications = new Map();
  for (const a of agents.values())
    if (a.verifiedAt) out.set(a.agentId, { agentId: a.agentId, domain: a.verifiedDomain, verifiedAt: a.verifiedAt });
  return out;
}

/** Agent id → name of looked-up `agents`. */
export function namesOf(agents: Map<string, identity.Agent>): Map<string, string> {
  return new Map([...agents.values()].map((a) => [a.agentId, a.name]));
}

/**
 * Names of the councillors who cast `ballots`, looked up in the identity service in one batch
 * call (docs/design/council.md#the-forums-projection-of-the-case). Unknown ids are left out.
 */
export async function councillorNames(identity: AgentLookup, ballots: council.Ballot[]): Promise<Map<string, string>> {
  return namesOf(
    await lookUpAgents(
      identity,
      ballots.map((b) => b.councillorId),
    ),
  );
}
