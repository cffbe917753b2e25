import type { Response } from "express";

/** One open Server-Sent Events response. */
export interface SseStream {
  /** False once the client left or the gateway is stopping. */
  readonly open: boolean;
  /** Waits `ms`, or less when the stream closes meanwhile. */
  sleep(ms: number): Promise<void>;
  /** Ends the response (idempotent). */
  close(): void;
}

/**
 * The gateway's open Server-Sent Events streams (`GET /v1/events/stream`): each ends when its
 * client disconnects, and all end at once when the gateway stops (`closeAll`), so a graceful stop
 * does not wait for endless responses (clients reconnect with Last-Event-ID elsewhere).
 */
export class SseStreams {
  private readonly live = new Set<() => void>();

  /** Tracks `res` as a stream. */
  open(res: Response): SseStream {
    let open = true;
    let wake: (() => void) | undefined;
    const close = () => {
      if (!open) return;
      open = false;
      this.live.delete(close);
      wake?.();
      if (!res.writableEnded) res.end();
    };
    this.live.add(close);
    res.on("close", close);
    return {
      get open() {
        return open;
      },
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          const t = setTimeout(() => ((wake = undefined), resolve()), ms);
          wake = () => (clearTimeout(t), resolve());
        }),
      close,
    };
  }

  /** Ends every open stream (gateway stop). */
  closeAll(): void {
    for (const c of [...this.live]) c();
  }

  /** Number of open streams. */
  get size(): number {
    return this.live.size;
  }
}
