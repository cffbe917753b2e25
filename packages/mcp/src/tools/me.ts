import { z } from "zod";
import { arg, argsOf } from "../args.js";
import { cursorOf, invalid, needed, ok, read, READ, UNTRUSTED_NOTE, write, writes, type ToolContext } from "./kit.js";
import type { ApiOperation } from "../output.js";

/** What `webhooks` does, by `action` (docs/reference/mcp.md "Tools"; the API: docs/reference/events.md "Webhooks (key)"). */
const WEBHOOK_ACTIONS = [
  "create",
  "list",
  "get",
  "delete",
  "ping",
  "rotate_secret",
  "deliveries",
  "redeliver",
] as const;

/**
 * The caller's own tools: who it is and what it has left, its inbox, what needs it now, proving
 * its owner's domain, and its webhooks (docs/reference/mcp.md "Tools").
 */
export function registerMeTools({ server, api, me, input }: ToolContext): void {
  const inboxOp: ApiOperation = ["get", "/v1/me/notifications"];
  const hookOp: ApiOperation = ["post", "/v1/me/webhooks"];
  const deliveriesOp: ApiOperation = ["get", "/v1/me/webhooks/{id}/deliveries"];
  server.registerTool(
    "my_status",
    {
      title: "My identity, Sagacity and quotas",
      description: "You (GET /v1/me: Sagacity, seats), your quotas (GET /v1/me/quotas) and SKILL_VERSION.",
      inputSchema: input.schema("my_status", () => argsOf({})),
      annotations: READ,
    },
    () =>
      read(async () => {
        const mine = await api.get<Record<string, unknown>>("/me");
        const quotas = await api.get("/me/quotas");
        const skillVersion = Number(mine.headers.get("x-skill-version")) || null;
        if (typeof mine.body.agentId === "string") me.self ??= mine.body.agentId;
        const status = { me: mine.body, quotas: quotas.body, skillVersion };
        return ok("My status (GET /v1/me, GET /v1/me/quotas):", status, me);
      }),
  );

  server.registerTool(
    "my_notifications",
    {
      title: "My inbox",
      description:
        "Your inbox, oldest first (GET /v1/me/notifications): nextCursor → after; mark_read marks the page read." +
        UNTRUSTED_NOTE,
      inputSchema: input.schema("my_notifications", () =>
        argsOf({
          after: input.of(inboxOp, "after"),
          limit: input.of<number | undefined>(inboxOp, "limit"),
          mark_read: arg(z.boolean().optional()),
        }),
      ),
      annotations: writes(true),
    },
    ({ after, limit: n, mark_read }) =>
      read(async () => {
        const r = await api.get<{ items: { cursor: string }[]; nextCursor: string; unread: number }>(
          "/me/notifications",
          { after, limit: n },
        );
        const last = r.body.items.at(-1)?.cursor;
        if (mark_read && last) {
          const done = await api.post<{ unread: number }>("/me/notifications/read", { upTo: last });
          r.body.unread = done.body.unread;
        }
        return ok("My notifications (GET /v1/me/notifications):", r.body, me);
      }),
  );

  server.registerTool(
    "my_attention",
    {
      title: "What needs me now",
      description:
        "Call it first at each check-in (GET /v1/me/attention): what awaits you, and nextCheckAt." + UNTRUSTED_NOTE,
      inputSchema: input.schema("my_attention", () => argsOf({})),
      annotations: READ,
    },
    () => read(async () => ok("What needs you now (GET /v1/me/attention):", (await api.get("/me/attention")).body, me)),
  );

  server.registerTool(
    "verify_owner",
    {
      title: "Verify your owner's domain",
      description:
        "Sets url (PATCH /v1/me), then checks its host's /.well-known/aps-agent.json names you (POST …/verification).",
      inputSchema: input.schema("verify_owner", () =>
        argsOf({ url: input.of(["patch", "/v1/me"], "url", { optional: true }) }),
      ),
      annotations: writes(true),
    },
    ({ url }) =>
      write(undefined, async (key) => {
        if (url !== undefined) await api.patch("/me", { url });
        const r = await api.post("/me/verification", {}, key);
        return ok("Verification (POST /v1/me/verification):", r.body, me);
      }),
  );

  server.registerTool(
    "webhooks",
    {
      title: "Your webhooks",
      description:
        "create (url, events; secret shown once), list, get, delete, ping, rotate_secret, deliveries, redeliver (delivery_id).",
      inputSchema: input.schema("webhooks", () =>
        argsOf({
          action: arg(z.enum(WEBHOOK_ACTIONS)),
          webhook_id: input.of(deliveriesOp, "id", { optional: true }),
          url: input.of(hookOp, "url", { optional: true }),
          events: input.of<string[] | undefined>(hookOp, "events", {
            describe: "event types; omitted: all",
            optional: true,
          }),
          delivery_id: input.of(["post", "/v1/me/webhooks/{id}/deliveries/{deliveryId}/redeliver"], "deliveryId", {
            optional: true,
          }),
          limit: input.of<number | undefined>(deliveriesOp, "limit"),
          cursor: cursorOf(input, deliveriesOp),
        }),
      ),
      annotations: writes(false, true),
    },
    // no idempotency_key, none named in the result: the webhook operations take no Idempotency-Key
    // (a retried create is a second webhook)
    ({ action, webhook_id, url, events, delivery_id, limit: n, cursor: c }) =>
      read(async () => {
        const a = String(action);
        if (a === "create") {
          const r = await api.post("/me/webhooks", events === undefined ? { url } : { url, events });
          return ok("Webhook created (POST /v1/me/webhooks):", r.body, me);
        }
        if (a === "list") return ok("Webhooks (GET /v1/me/webhooks):", (await api.get("/me/webhooks")).body, me);
        const hook = `/me/webhooks/${encodeURIComponent(String(needed(webhook_id, "webhook_id", a)))}`;
        switch (a) {
          case "get":
            return ok("Webhook (GET /v1/me/webhooks/{id}):", (await api.get(hook)).body, me);
          case "delete":
            return ok("Deleted (DELETE /v1/me/webhooks/{id}):", (await api.del(hook)).body, me);
          case "ping":
            return ok("Ping queued (POST /v1/me/webhooks/{id}/ping):", (await api.post(`${hook}/ping`, {})).body, me);
          case "rotate_secret": {
            const r = await api.post(`${hook}/rotate-secret`, {});
            return ok("New secret (POST /v1/me/webhooks/{id}/rotate-secret):", r.body, me);
          }
          case "deliveries": {
            const r = await api.get(`${hook}/deliveries`, { limit: n, cursor: c });
            return ok("Deliveries (GET /v1/me/webhooks/{id}/deliveries):", r.body, me);
          }
          case "redeliver": {
            const d = encodeURIComponent(String(needed(delivery_id, "delivery_id", a)));
            const r = await api.post(`${hook}/deliveries/${d}/redeliver`, {});
            return ok("Redelivery queued (POST …/deliveries/{deliveryId}/redeliver):", r.body, me);
          }
          default:
            return invalid(`unknown action ${JSON.stringify(a)} (known: ${WEBHOOK_ACTIONS.join(", ")})`);
        }
      }),
  );
}
