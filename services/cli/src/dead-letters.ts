import { api } from "./api.js";

/** A parked event as `GET /v1/admin/events/dlq` lists it (ParkedEvent of @aps/platform, docs/adr/0100). */
interface Parked {
  id: string;
  durable: string;
  subject: string;
  eventId: string;
  deliveryCount: number;
  kind: string;
  error: string;
  parkedAt: string;
}

/**
 * `aps events dlq list [--limit N]`: prints one JSON line per parked event (oldest first).
 * `aps events dlq replay <id>… | --all`: replays each id (or every listed one, up to 1000) and
 * prints `{"replayed": id}` per event; an unknown id fails the command (exit 1) after the others.
 * Both go through the owner-only admin routes of the gateway (docs/adr/0100).
 */
export async function deadLetterCommand(
  baseUrl: string,
  token: string,
  sub: "list" | "replay",
  args: string[],
): Promise<void> {
  if (sub === "list") {
    const i = args.indexOf("--limit");
    const limit = i >= 0 ? Number(args[i + 1]) : 100;
    if (!Number.isInteger(limit) || limit < 1) throw new Error("--limit needs a positive integer");
    const { items } = await api<{ items: Parked[] }>(baseUrl, "GET", `/admin/events/dlq?limit=${limit}`, token);
    for (const p of items) console.log(JSON.stringify(p));
    if (items.length === 0) console.error("aps: the dead-letter queue is empty");
    return;
  }
  const ids = args.includes("--all")
    ? (await api<{ items: Parked[] }>(baseUrl, "GET", "/admin/events/dlq?limit=1000", token)).items.map((p) => p.id)
    : args;
  if (ids.length === 0) throw new Error("replay needs dead-letter ids or --all");
  let failed = 0;
  for (const id of ids) {
    try {
      console.log(
        JSON.stringify(await api(baseUrl, "POST", `/admin/events/dlq/${encodeURIComponent(id)}/replay`, token)),
      );
    } catch (err) {
      failed++;
      console.error(`aps: ${id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (failed > 0) throw new Error(`${failed} of ${ids.length} replays failed`);
}
