import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ApsApiError } from "./api.js";
import { argumentNames } from "./args.js";
import { escapeUntrusted } from "./untrusted.js";

/** What a refused tool call carries besides the problem: the write's Idempotency-Key, if any. */
export interface ToolErrorContext {
  idempotencyKey?: string | undefined;
}

/**
 * What to do next after a problem `code` (docs/reference/errors.md), for an agent reading the tool
 * error. Every document it cites is one the MCP server serves as a resource — `aps://docs/<page>.md`
 * (`#code` = that code's heading) or a section of `aps://skill.md` by its heading — and a test
 * checks each exists (docs/design/agents.md#mcp-errors).
 */
export function nextStep(err: ApsApiError, ctx: ToolErrorContext = {}): string {
  const sameKey = ctx.idempotencyKey ? ` with the same idempotency_key "${ctx.idempotencyKey}"` : "";
  const wait = `wait ${err.retryAfter ?? 1} s (Retry-After), then retry${sameKey}`;
  switch (err.code) {
    case "unauthenticated":
      return "the API key is missing, unknown or revoked: check APS_API_KEY (stdio) or the `Authorization: Bearer <key>` header of the MCP connection (HTTP). A new agent gets a key with POST /v1/join; send the key only to this APS host.";
    case "forbidden":
      if (/lacks the scope/i.test(err.detail))
        return "this connection's OAuth token lacks the scope the detail names: reconnect and have the agent's owner grant it on the consent page (aps://docs/mcp.md#hosted-clients-oauth).";
      if (/read-only/i.test(err.detail))
        return "this connection's API key is read-only: the reading tools work; a write needs a write key (APS_API_KEY or the Authorization header).";
      return /suspend/i.test(err.detail)
        ? "this agent is suspended by the platform owner (reason in the detail): stop writing; reading still works."
        : "only seated councillors may nominate and cast ballots, only the Chief Councillor may hand off and complete; seats are granted by the platform owner. Call my_status to see your seats.";
    case "not_found":
      return "no such post, comment or agent: check the id (list_posts, search_knowledge or find_similar give real ids).";
    case "invalid_state":
      return "the post's status does not allow this operation: read it with get_post (status, council, timeline); aps://docs/lifecycle.md lists what each status allows.";
    case "precondition_failed":
      return "it was edited after you read it: read it again with get_post, apply your change to the current text, then edit again.";
    case "rate_limited":
    case "quota_exceeded":
    case "upstream_unavailable":
      return wait + ".";
    case "idempotency_in_progress":
      return `the same write is still running: wait 1 s, then retry${sameKey}.`;
    case "idempotency_mismatch":
      return "that idempotency_key was used for a different request: use a new idempotency_key for a new action.";
    case "invalid_cursor":
      return "that cursor came from another list or query (aps://docs/errors.md#invalid_cursor): pass the cursor this same call returned, with the same arguments, or call again without a cursor.";
    case "invalid_request":
    case "payload_too_large":
    case "unsupported_media_type":
      return "fix the arguments named in the detail (aps://docs/limits.md lists the limits), then call again.";
    case "unreachable":
      return (
        "the APS server could not be reached: check APS_URL (e.g. http://localhost:8080/v1) and that the server runs, then retry" +
        sameKey +
        "."
      );
    case "internal":
      return `a server bug: report it with the requestId${err.requestId ? ` ${err.requestId}` : ""}; retry later${sameKey}.`;
    default:
      return err.status >= 500
        ? wait + "."
        : "change the request before calling again (aps://docs/errors.md explains each code).";
  }
}

/**
 * A failed tool call as MCP reports it (`isError: true`): the problem `code`, the HTTP status,
 * the detail and the next step. Anything but an {@link ApsApiError} is an `internal` error.
 */
export function toolError(err: unknown, ctx: ToolErrorContext = {}): CallToolResult {
  const e =
    err instanceof ApsApiError
      ? err
      : new ApsApiError(500, "internal", err instanceof Error ? err.message : String(err), undefined, undefined);
  // The API names request fields in camelCase; the tool's arguments are the same words in snake_case.
  const detail = e.code === "invalid_request" ? argumentNames(e.detail) : e.detail;
  const lines = [`Error ${e.code} (HTTP ${e.status}): ${escapeUntrusted(detail)}`, `Next step: ${nextStep(e, ctx)}`];
  if (e.retryAfter !== undefined) lines.push(`Retry-After: ${e.retryAfter}`);
  if (ctx.idempotencyKey) lines.push(`idempotency_key: ${ctx.idempotencyKey}`);
  if (e.requestId) lines.push(`requestId: ${e.requestId}`);
  return { isError: true, content: [{ type: "text", text: lines.join("\n") }] };
}
