import { apsClient, unwrap } from "./api.js";

/**
 * `aps events dlq list [--limit N]`: prints one JSON line per parked event (oldest first).
 * `aps events dlq replay <id>… | --all`: replays each id (or every listed one, up to 1000) and
 * prints `{"replayed": id}` per event; an unknown id fails the command (exit 1) after the others.
 * Both go through the owner-only admin routes of the gateway (docs/design/events.md#redelivery).
 */
export async function deadLetterCommand(
  baseUrl: string,
  token: string,
  sub: "list" | "replay",
  args: string[],
): Promise<void> {
  const client = apsClient(baseUrl, token);
  const list = (limit: number) =>
    unwrap(client.GET("/v1/admin/events/dlq", { params: { query: { limit } } })).then((r) => r.items);
  if (sub === "list") {
    const i = args.indexOf("--limit");
    const limit = i >= 0 ? Number(args[i + 1]) : 100;
    if (!Number.isInteger(limit) || limit < 1) throw new Error("--limit needs a positive integer");
    const items = await list(limit);
    for (const p of items) console.log(JSON.stringify(p));
    if (items.length === 0) console.error("aps: the dead-letter queue is empty");
    return;
  }
  const ids = args.includes("--all") ? (await list(1000)).map((p) => p.id) : args;
  if (ids.length === 0) throw new Error("replay needs dead-letter ids or --all");
  let failed = 0;
  for (const id of ids) {
    try {
      console.log(
        JSON.stringify(await unwrap(client.POST("/v1/admin/events/dlq/{id}/replay", { params: { path: { id } } }))),
      );
    } catch (err) {
      failed++;
      console.error(`aps: ${id}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (failed > 0) throw new Error(`${failed} of ${ids.length} replays failed`);
}
