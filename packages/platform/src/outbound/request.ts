import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { CheckedTarget } from "./ssrf.js";

/**
 * One outbound HTTP exchange with a target an agent chose (a webhook endpoint, docs/design/notifications.md#attempts), after
 * the SSRF guard (`checkTarget`) passed it.
 */
export interface OutboundRequest {
  method: "GET" | "POST";
  headers: Record<string, string>;
  /** The request body (POST), sent as is. */
  body?: string;
  /** Hard deadline over connect, request, status and answer, ms. */
  deadlineMs: number;
  /** At most this many bytes of the answer are read; then the connection is closed. */
  maxBytes: number;
  /** Ends the exchange early (`aborted`), e.g. when a worker stops. */
  signal?: AbortSignal;
}

/** What came of one exchange. Never an exception: the caller maps kinds to what its users see. */
export interface OutboundOutcome {
  /**
   * `ok`: a 2xx answer read to its end or to its first `maxBytes`; `status`: any other status
   * (3xx redirects are never followed); `timeout`: the deadline passed first; `failed`: DNS, TLS,
   * refused, reset; `aborted`: the signal fired.
   */
  kind: "ok" | "status" | "timeout" | "failed" | "aborted";
  /** The answer's status, 0 when none arrived. */
  statusCode: number;
  /** The answer's `content-type` header, "" when none. */
  contentType: string;
  /** The first `maxBytes` bytes of the answer (fewer when it ended sooner). */
  body: Buffer;
  /** True when the answer had more than `maxBytes` bytes (the rest was not read). */
  truncated: boolean;
  /** For the service's log only (may name addresses). */
  detail: string;
  /** How long the exchange took, ms. */
  ms: number;
}

/**
 * Sends `req` to the checked address of `target` (TLS still verifies the URL's host name: the
 * pinned lookup only fixes the address, so DNS rebinding cannot move the connection after the
 * guard), on a fresh connection (`agent: false`), under one deadline over the whole exchange
 * (docs/design/notifications.md#attempts). It ends at the answer's end, as soon as more than `maxBytes` of answer arrived (the
 * connection is then closed, `truncated` is set and `body` keeps the first `maxBytes`), at the deadline
 * (`timeout`) or when `signal` aborts (`aborted`). Redirects are not followed. Never rejects.
 */
export function outboundRequest(target: CheckedTarget, req: OutboundRequest): Promise<OutboundOutcome> {
  const pinned: LookupFunction = (_host, options, cb) => {
    if ((options as { all?: boolean }).all)
      (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ]);
    else cb(null, target.address, target.family);
  };
  const mod = target.url.protocol === "https:" ? https : http;
  const started = Date.now();
  const { signal } = req;
  return new Promise<OutboundOutcome>((resolve) => {
    let settled = false;
    let res: http.IncomingMessage | undefined;
    const chunks: Buffer[] = [];
    let read = 0;
    let truncated = false;
    const finish = (kind: OutboundOutcome["kind"], detail = ""): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener("abort", onAbort);
      res?.destroy();
      request.destroy();
      const body = Buffer.concat(chunks);
      resolve({
        kind,
        statusCode: res?.statusCode ?? 0,
        contentType: String(res?.headers["content-type"] ?? ""),
        body: body.length > req.maxBytes ? body.subarray(0, req.maxBytes) : body,
        truncated,
        detail,
        ms: Date.now() - started,
      });
    };
    const onAbort = () => finish("aborted", "aborted");
    const deadline = setTimeout(
      () => finish("timeout", `no complete answer within ${req.deadlineMs} ms`),
      req.deadlineMs,
    );
    const request = mod.request(
      target.url,
      { method: req.method, headers: req.headers, lookup: pinned, agent: false },
      (r) => {
        res = r;
        const code = r.statusCode ?? 0;
        const done = () => finish(code >= 200 && code < 300 ? "ok" : "status");
        r.on("data", (chunk: Buffer) => {
          chunks.push(chunk);
          read += chunk.length;
          if (read > req.maxBytes) {
            truncated = true;
            done();
          }
        });
        r.on("end", done);
        r.on("error", (e) => finish("failed", e.message));
      },
    );
    request.on("error", (e) => finish("failed", e.message));
    if (signal?.aborted) onAbort();
    else signal?.addEventListener("abort", onAbort);
    request.end(req.body);
  });
}
