/**
 * NATS permissions of each APS deployable (docs/design/services.md#caller-policy-and-internal-trust): the one source the
 * chart's in-cluster NATS users mirror (charts/aps/templates/_helpers.tpl `aps.natsPermissions`;
 * test/ops/helm.test.ts compares the two) and test/trust/nats-permissions.test.ts runs on a real
 * nats-server. A service publishes only its own events (`<prefix>.<service>.>`) and the dead
 * letters of its own durable consumers (`<prefix>.dlq.<durable>`); it may use the JetStream API of
 * the event stream only (create/update it with its limits, run consumers, ack) and receive replies
 * on `_INBOX.>`. The gateway also subscribes to every event (cache invalidation, docs/design/edge.md#read-cache-and-etags) and
 * reads the dead-letter queue, but publishes no event: replaying a parked event re-publishes
 * another service's subject, which needs the operator's credentials (docs/design/services.md#caller-policy-and-internal-trust).
 */

/** Publish and subscribe allow-lists of one NATS user (nats-server `permissions`). */
export interface NatsPermissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

/** The durable consumers of each service (their dead letters go to `<prefix>.dlq.<durable>`). */
export const OWN_DURABLES: Readonly<Record<string, readonly string[]>> = {
  forum: ["forum-status", "forum-case-projection"],
  identity: ["identity-sagacity"],
  council: ["council-agenda"],
  knowledge: ["knowledge-index"],
  notifications: ["notifications-feed", "notifications-audit"],
};

/** Names of the NATS users: every deployable (topology.ts) connects as itself. */
export const NATS_USERS = [
  "gateway",
  "identity",
  "forum",
  "council",
  "knowledge",
  "translation",
  "notifications",
] as const;

/**
 * The operator's NATS user: no restriction (replaying dead letters, inspecting the stream). Its
 * password is in the Secret only; no pod gets it (docs/design/services.md#caller-policy-and-internal-trust).
 */
export const NATS_OPERATOR_USER = "operator";

/**
 * The permissions of `user` (a deployable name) on a deployment whose subjects start with
 * `prefix` (`APS_SUBJECT_PREFIX`, default `aps`) and whose events live in stream `stream`
 * (`NATS_STREAM`, default `APS`).
 */
export function natsPermissions(user: string, prefix = "aps", stream = "APS"): NatsPermissions {
  const jsApi = ["$JS.API.INFO", `$JS.API.STREAM.INFO.${stream}`, `$JS.API.CONSUMER.>`, `$JS.ACK.${stream}.>`];
  if (user === "gateway")
    return {
      // the gateway reads (lists) the dead-letter queue; nothing it publishes is an event
      publish: { allow: [...jsApi, `$JS.API.STREAM.MSG.GET.${stream}`] },
      subscribe: { allow: ["_INBOX.>", `${prefix}.>`] },
    };
  return {
    publish: {
      allow: [
        `${prefix}.${user}.>`,
        ...(OWN_DURABLES[user] ?? []).map((d) => `${prefix}.dlq.${d}`),
        ...jsApi,
        // every service connecting with limits keeps the stream as configured (docs/design/events.md#stream-retention)
        `$JS.API.STREAM.CREATE.${stream}`,
        `$JS.API.STREAM.UPDATE.${stream}`,
      ],
    },
    subscribe: { allow: ["_INBOX.>"] },
  };
}

/**
 * The `authorization { users = [...] }` block of a nats-server config for `users` (name and
 * password): each with natsPermissions, the operator (NATS_OPERATOR_USER) unrestricted. For a test's private server; the chart renders the same
 * block with the passwords as `$NATS_PASSWORD_<USER>` environment references.
 */
export function natsAuthorizationBlock(
  users: readonly { user: string; password: string }[],
  prefix = "aps",
  stream = "APS",
): string {
  const lines = users.map((u) => {
    const head = `    { user: ${JSON.stringify(u.user)}, password: ${JSON.stringify(u.password)}`;
    if (u.user === NATS_OPERATOR_USER) return `${head} }`;
    return `${head}, permissions: ${JSON.stringify(natsPermissions(u.user, prefix, stream))} }`;
  });
  return `authorization {\n  users = [\n${lines.join("\n")}\n  ]\n}\n`;
}
