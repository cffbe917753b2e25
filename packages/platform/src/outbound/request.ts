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

/** Tuning of `OutboundConnections`; the defaults are the webhook worker's. */
export interface OutboundConnectionOptions {
  /** Targets (URL origin and checked address) with a pool kept at once; the least recently used is closed beyond it (default 256). */
  maxTargets?: number;
  /** An idle connection is closed after this long, ms (default 4,000; sooner when the server's `Keep-Alive: timeout` says so). */
  idleMs?: number;
  /**
   * Idle connections kept per target (default 4). Connections in use are not capped here: many
   * endpoints may share one host, and the caller bounds its requests in flight.
   */
  maxIdlePerTarget?: number;
}

/**
 * Kept-alive connections for outbound requests, one pool per target
 * (docs/design/notifications.md#attempts): a pool is keyed by the URL's scheme, host name and port
 * and by the address the SSRF guard checked, so a connection is only ever reused for a request to
 * that same checked address (a new address after a DNS change opens a new pool). At most
 * `maxTargets` pools (least recently used closed first), each keeping at most `maxIdlePerTarget`
 * idle connections, each closed after `idleMs` idle: at most 1,024 idle connections by default. Without it every exchange opens
 * a connection (and, for `https:`, a TLS handshake) of its own.
 */
export class OutboundConnections {
  private readonly pools = new Map<string, http.Agent>();
  private readonly maxTargets: number;
  private readonly idleMs: number;
  private readonly maxIdle: number;

  constructor(opts: OutboundConnectionOptions = {}) {
    this.maxTargets = opts.maxTargets ?? 256;
    this.idleMs = opts.idleMs ?? 4_000;
    this.maxIdle = opts.maxIdlePerTarget ?? 4;
  }

  /** The pool (an http or https `Agent` with keep-alive) for `target`, created on first use. */
  agentFor(target: CheckedTarget): http.Agent {
    const { protocol, hostname, port } = target.url;
    const key = `${protocol}//${hostname}:${port}@${target.address}`;
    let agent = this.pools.get(key);
    if (agent) {
      this.pools.delete(key); // most recently used last
    } else {
      const opts = { keepAlive: true, maxFreeSockets: this.maxIdle, timeout: this.idleMs };
      agent = protocol === "https:" ? new https.Agent(opts) : new http.Agent(opts);
      const oldest = this.pools.size >= this.maxTargets ? this.pools.keys().next().value : undefined;
      if (oldest !== undefined) {
        this.pools.get(oldest)?.destroy();
        this.pools.delete(oldest);
      }
    }
    this.pools.set(key, agent);
    return agent;
  }

  /** Targets with a pool now (tests, metrics). */
  get size(): number {
    return this.pools.size;
  }

  /** Closes every pool's connections (a worker's stop); later requests open new ones. */
  close(): void {
    for (const agent of this.pools.values()) agent.destroy();
    this.pools.clear();
  }
}

/**
 * Sends `req` to the checked address of `target` (TLS still verifies the URL's host name: the
 * pinned lookup only fixes the address, so DNS rebinding cannot move the connection after the
 * guard), under one deadline over the whole exchange (docs/design/notifications.md#attempts): on
 * a connection of `connections` kept for that address (an answer read to its end leaves it open
 * for the next request), or on a fresh one closed after the exchange when `connections` is absent.
 * A kept connection the server closed just as the request went out (ECONNRESET or EPIPE before any
 * answer) is retried once on a new connection. It ends at the answer's end, as soon as more than
 * `maxBytes` of answer arrived (the connection is then closed, `truncated` is set and `body` keeps
 * the first `maxBytes`), at the deadline (`timeout`) or when `signal` aborts (`aborted`).
 * Redirects are not followed. Never rejects.
 */
export function outboundRequest(
  target: CheckedTarget,
  req: OutboundRequest,
  connections?: OutboundConnections,
): Promise<OutboundOutcome> {
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
    let request: http.ClientRequest | undefined;
    let res: http.IncomingMessage | undefined;
    let ended = false;
    let retried = false;
    const chunks: Buffer[] = [];
    let read = 0;
    let truncated = false;
    const finish = (kind: OutboundOutcome["kind"], detail = ""): void => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      signal?.removeEventListener("abort", onAbort);
      if (!ended) {
        // cut short (deadline, abort, too long, an error): the connection is not reused
        res?.destroy();
        request?.destroy();
      }
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
    const send = (agent: http.Agent | false): void => {
      request = mod.request(target.url, { method: req.method, headers: req.headers, lookup: pinned, agent }, (r) => {
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
        r.on("end", () => {
          ended = true;
          done();
        });
        r.on("error", (e) => finish("failed", e.message));
      });
      const sent = request;
      sent.on("error", (e: NodeJS.ErrnoException) => {
        if (settled || sent !== request) return;
        if (sent.reusedSocket && !res && !retried && (e.code === "ECONNRESET" || e.code === "EPIPE")) {
          retried = true; // the server closed the kept connection as the request went out
          send(connections ? connections.agentFor(target) : false);
          return;
        }
        finish("failed", e.message);
      });
      sent.end(req.body);
    };
    if (signal?.aborted) {
      onAbort();
      return;
    }
    signal?.addEventListener("abort", onAbort);
    send(connections ? connections.agentFor(target) : false);
  });
}
