import type { Response } from "express";
import { ApsError, eventStreamEnds, eventStreamRefusals, registerOpenStreams, type Logger } from "@aps/platform";

/**
 * Bounds of the event streams (docs/design/events.md#event-stream-sse); the gateway reads them from
 * EVENT_STREAMS_PER_SOURCE, EVENT_STREAMS_PER_REPLICA, EVENT_STREAM_MAX_BUFFER_BYTES and
 * EVENT_STREAM_MAX_AGE_MS (config.ts).
 */
export interface StreamLimits {
  /** Streams open at once per client source (`abuseSource`, docs/design/identity-and-abuse.md#client-source-and-abuse-source) in this process; beyond: 429. */
  perSource: number;
  /** Streams open at once per agent (a keyed request) in this process, within its source's; beyond: 429. */
  perAgent: number;
  /** Streams open at once in this process; beyond: 503. */
  perReplica: number;
  /** Unsent bytes (queued here + the socket's buffer) past which a client is dropped. */
  maxBufferBytes: number;
  /** Age after which the server ends a stream cleanly, ms (each stream 90–100 % of it, spread). */
  maxAgeMs: number;
}

/** The gateway's defaults (config.ts): 10 per source, 3 per agent, 2,000 per process, 1 MiB, 15 min. */
export const DEFAULT_STREAM_LIMITS: StreamLimits = {
  perSource: 10,
  perAgent: 3,
  perReplica: 2_000,
  maxBufferBytes: 1024 * 1024,
  maxAgeMs: 15 * 60_000,
};

/** Why a stream ended (`aps_event_stream_ends_total{reason}`). */
export type StreamEndReason = "client_closed" | "max_age" | "slow_client" | "shutdown" | "upstream_error";

/** `Retry-After` of a 429 (the source holds its most streams): one of them has to end first, s. */
const SOURCE_RETRY_AFTER_S = 30;
/** `Retry-After` of a 503 (this process holds its most streams; another replica may have room), s. */
const REPLICA_RETRY_AFTER_S = 5;
/** A comment line keeps idle proxies from closing a quiet stream, ms. */
const HEARTBEAT_MS = 15_000;
/** How often quiet streams are looked for, ms. */
const HEARTBEAT_TICK_MS = 5_000;
/** Largest single write: queued frames are written together up to this, bytes. */
const WRITE_BYTES = 64 * 1024;
/** A stream ended by the server whose client does not take the rest within this is cut, ms. */
const END_GRACE_MS = 5_000;

/** One SSE frame and its UTF-8 length in bytes. */
export interface Frame {
  readonly frame: string;
  readonly bytes: number;
}

/** A place admitted for one stream (see `SseStreams.admit`); released once, by `close` or by the caller. */
export interface StreamTicket {
  release(): void;
}

/** One open Server-Sent Events response, written with backpressure. */
export interface SseStream {
  /** False once the stream ended (client left, dropped, max age, gateway stopping). */
  readonly open: boolean;
  /**
   * Queues `chunks` — one text, or a batch of frames with their UTF-8 lengths — and writes what the
   * socket takes; when `res.write` answers false the rest waits for `drain`. When, as a batch
   * arrives, more than `maxBufferBytes` of earlier ones are still unsent (queued here + the
   * socket's buffer), the client is dropped instead (`slow_client`): a stream holds at most
   * `maxBufferBytes` + one batch. No-op once closed.
   */
  send(chunks: string | readonly Frame[]): void;
  /** Resolves once everything queued was handed to the socket without backpressure, or the stream ended. */
  writable(): Promise<void>;
  /** Waits `ms`, or less when the stream ends meanwhile. */
  sleep(ms: number): Promise<void>;
  /** Runs `fn` once when the stream ends, for any reason. */
  onClose(fn: () => void): void;
  /** Ends the stream (idempotent): `slow_client` cuts the connection, the others end it cleanly. */
  close(reason: StreamEndReason): void;
}

/**
 * The gateway's open Server-Sent Events streams (`GET /v1/events/stream`,
 * docs/design/events.md#event-stream-sse): at most `perSource` per client source and `perReplica` in this process (counted
 * here, in memory: the bound protects this process); each written with backpressure and dropped
 * when its unsent buffer passes `maxBufferBytes`; each ended cleanly after `maxAgeMs` (spread over
 * its last 10 %, so streams opened together do not reconnect together); a keep-alive comment after
 * 15 s of silence; all ended at once when the gateway stops (`closeAll`), so a graceful stop does
 * not wait for endless responses (clients reconnect with Last-Event-ID elsewhere).
 */
export class SseStreams {
  readonly limits: StreamLimits;
  readonly log: Logger | undefined;
  private readonly live = new Set<Stream>();
  private readonly bySource = new Map<string, number>();
  private readonly byAgent = new Map<string, number>();
  /** Admitted places (open streams and streams still starting). */
  private held = 0;
  private heartbeat: NodeJS.Timeout | undefined;

  constructor(limits: Partial<StreamLimits> = {}, log?: Logger) {
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
    this.log = log;
    registerOpenStreams(this);
  }

  /**
   * Admits one stream of `source` (and of `agentId`, when the request carried a key), or throws:
   * 429 `rate_limited` when the agent holds `perAgent` streams or the source `perSource`, 503
   * `upstream_unavailable` when this process holds `perReplica`, each with `Retry-After`.
   * Synchronous, so concurrent requests cannot overshoot. Release the ticket (or pass it to
   * `open`, whose stream releases it when it ends).
   */
  admit(source: string, agentId?: string): StreamTicket {
    const refuse = (reason: string, code: "rate_limited" | "upstream_unavailable", why: string, retry: number) => {
      eventStreamRefusals.inc({ reason });
      return new ApsError(code, why, retry);
    };
    const { perAgent, perSource, perReplica } = this.limits;
    const agents = agentId === undefined ? 0 : (this.byAgent.get(agentId) ?? 0);
    if (agents >= perAgent)
      throw refuse("agent", "rate_limited", `at most ${perAgent} event streams at once per agent: close one first (EVENT_STREAMS_PER_AGENT)`, SOURCE_RETRY_AFTER_S); // prettier-ignore
    const mine = this.bySource.get(source) ?? 0;
    if (mine >= perSource)
      throw refuse("source", "rate_limited", `at most ${perSource} event streams at once per client source: close one first (EVENT_STREAMS_PER_SOURCE)`, SOURCE_RETRY_AFTER_S); // prettier-ignore
    if (this.held >= perReplica)
      throw refuse("replica", "upstream_unavailable", "this server holds its most event streams (EVENT_STREAMS_PER_REPLICA): retry later", REPLICA_RETRY_AFTER_S); // prettier-ignore
    this.bySource.set(source, mine + 1);
    if (agentId !== undefined) this.byAgent.set(agentId, agents + 1);
    this.held++;
    let released = false;
    const drop = (map: Map<string, number>, key: string) => {
      const n = (map.get(key) ?? 1) - 1;
      if (n <= 0) map.delete(key);
      else map.set(key, n);
    };
    return {
      release: () => {
        if (released) return;
        released = true;
        this.held--;
        drop(this.bySource, source);
        if (agentId !== undefined) drop(this.byAgent, agentId);
      },
    };
  }

  /** Tracks `res` (headers already sent) as a stream holding `ticket`. */
  open(res: Response, ticket: StreamTicket): SseStream {
    const maxAge = this.limits.maxAgeMs * (0.9 + 0.1 * Math.random());
    const s = new Stream(res, this.limits.maxBufferBytes, () => {
      this.live.delete(s);
      ticket.release();
      if (this.live.size === 0 && this.heartbeat) {
        clearInterval(this.heartbeat);
        this.heartbeat = undefined;
      }
    });
    this.live.add(s);
    s.ageTimer = setTimeout(() => s.close("max_age"), maxAge);
    s.ageTimer.unref();
    this.heartbeat ??= setInterval(() => this.keepAlive(), HEARTBEAT_TICK_MS).unref();
    return s;
  }

  /** Ends every open stream (gateway stop). */
  closeAll(): void {
    for (const s of [...this.live]) s.close("shutdown");
  }

  /** Number of open streams. */
  get size(): number {
    return this.live.size;
  }

  private keepAlive(): void {
    const quiet = Date.now() - HEARTBEAT_MS;
    for (const s of this.live) if (s.lastWrite <= quiet && !s.waitingDrain) s.send(": keep-alive\n\n");
  }
}

/** One stream: a queue of frames in front of `res`, written while the socket takes them. */
class Stream implements SseStream {
  open = true;
  lastWrite = Date.now();
  waitingDrain = false;
  ageTimer: NodeJS.Timeout | undefined;
  private queue: Frame[] = [];
  /** Index of the first unsent entry of `queue`. */
  private next = 0;
  /** Bytes queued and not yet handed to the socket. */
  private queued = 0;
  private waiters: (() => void)[] = [];
  private closers: (() => void)[] = [];
  private wakeSleep: (() => void) | undefined;

  constructor(
    private readonly res: Response,
    private readonly maxBuffer: number,
    private readonly forget: () => void,
  ) {
    res.on("close", () => this.close("client_closed"));
  }

  send(chunks: string | readonly Frame[]): void {
    if (!this.open) return;
    if (this.res.writableLength + this.queued > this.maxBuffer) {
      this.close("slow_client");
      return;
    }
    if (typeof chunks === "string") {
      this.queue.push({ frame: chunks, bytes: Buffer.byteLength(chunks) });
      this.queued += this.queue.at(-1)!.bytes;
    } else
      for (const c of chunks) {
        this.queue.push(c);
        this.queued += c.bytes;
      }
    this.flush();
  }

  writable(): Promise<void> {
    if (!this.open || (!this.waitingDrain && this.queued === 0)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  sleep(ms: number): Promise<void> {
    if (!this.open) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const t = setTimeout(() => ((this.wakeSleep = undefined), resolve()), ms);
      this.wakeSleep = () => (clearTimeout(t), resolve());
    });
  }

  onClose(fn: () => void): void {
    if (this.open) this.closers.push(fn);
    else fn();
  }

  close(reason: StreamEndReason): void {
    if (!this.open) return;
    this.open = false;
    clearTimeout(this.ageTimer);
    eventStreamEnds.inc({ reason });
    this.forget();
    const res = this.res;
    if (reason === "slow_client") res.destroy();
    else if (!res.writableEnded && !res.destroyed) {
      // what is queued is bounded by maxBuffer: hand it over, end, and cut a client that does not take it
      const rest = this.queue.slice(this.next).map((q) => q.frame);
      res.end(rest.join(""));
      if (!res.writableFinished)
        setTimeout(() => {
          if (!res.writableFinished) res.destroy();
        }, END_GRACE_MS).unref();
    }
    this.queue = [];
    this.next = 0;
    this.queued = 0;
    this.wakeSleep?.();
    for (const w of this.waiters.splice(0)) w();
    for (const c of this.closers.splice(0)) c();
  }

  /** Writes queued frames (up to WRITE_BYTES a write) until the socket pushes back; resumes on `drain`. */
  private flush(): void {
    if (this.waitingDrain) return;
    while (this.open && this.next < this.queue.length) {
      let text = "";
      let n = 0;
      while (this.next < this.queue.length && (n === 0 || n + this.queue[this.next]!.bytes <= WRITE_BYTES)) {
        const q = this.queue[this.next++]!;
        text += q.frame;
        n += q.bytes;
      }
      this.queued -= n;
      this.lastWrite = Date.now();
      if (!this.res.write(text)) {
        this.waitingDrain = true;
        this.res.once("drain", () => {
          this.waitingDrain = false;
          this.flush();
        });
        break;
      }
    }
    if (this.next === this.queue.length) {
      this.queue = [];
      this.next = 0;
    } else if (this.next > 1_024) {
      this.queue = this.queue.slice(this.next);
      this.next = 0;
    }
    if (!this.waitingDrain && this.queued === 0) for (const w of this.waiters.splice(0)) w();
  }
}
