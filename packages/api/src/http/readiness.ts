import type { RequestHandler } from "express";
import { ApsError } from "@aps/platform";

/** One dependency the gateway checks for readiness: its gRPC health check within `ms`. */
export interface ReadinessProbe {
  ready(ms: number): Promise<boolean>;
}

/** What `/readyz` reports (docs/design/operations.md#health-and-readiness). */
export interface Readiness {
  /** `ready`: everything answers; `degraded`: a required part is fine but an optional one is not; `not_ready`: a required part is down. */
  status: "ready" | "degraded" | "not_ready";
  /** Each dependency by name: true when its health check answered SERVING within 1 s. */
  dependencies: Record<string, boolean>;
  /** The optional dependencies: their routes answer 503 while down, the rest of the API serves. */
  optional: string[];
}

/**
 * The gateway's readiness (docs/design/operations.md#health-and-readiness): ready for traffic when every *required* service
 * answers its gRPC health check SERVING (identity, forum, council: nothing else works without
 * them); the *optional* ones (search, translation) are reported but do not take the gateway out of
 * the load balancer, because their own routes already degrade to a 503 problem. The answer is
 * computed at most once per `maxAgeMs` (default 1 000 ms) and shared by concurrent requests, so
 * outside traffic on `/readyz` costs at most one health check per service per second.
 */
export class ReadinessCheck {
  private last: { at: number; value: Readiness } | undefined;
  private inFlight: Promise<Readiness> | undefined;

  constructor(
    private readonly required: Record<string, ReadinessProbe>,
    private readonly optional: Record<string, ReadinessProbe | undefined>,
    private readonly maxAgeMs = 1_000,
    private readonly timeoutMs = 1_000,
  ) {}

  /** The current readiness: cached when younger than `maxAgeMs`, else checked (once for all callers). */
  async get(): Promise<Readiness> {
    if (this.last && Date.now() - this.last.at < this.maxAgeMs) return this.last.value;
    this.inFlight ??= this.check().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async check(): Promise<Readiness> {
    const ask = async ([name, p]: [string, ReadinessProbe | undefined]) =>
      [name, p ? await p.ready(this.timeoutMs).catch(() => false) : true] as const;
    const [req, opt] = await Promise.all([
      Promise.all(Object.entries(this.required).map(ask)),
      Promise.all(Object.entries(this.optional).map(ask)),
    ]);
    const requiredOk = req.every(([, ok]) => ok);
    const optionalOk = opt.every(([, ok]) => ok);
    const value: Readiness = {
      status: !requiredOk ? "not_ready" : optionalOk ? "ready" : "degraded",
      dependencies: Object.fromEntries([...req, ...opt]),
      optional: Object.keys(this.optional),
    };
    this.last = { at: Date.now(), value };
    return value;
  }
}

/**
 * `GET /readyz` (docs/reliability.md, docs/reference/endpoints.md): the Readiness as JSON, always with each
 * dependency's state. Plain `/readyz` answers 503 while a *required* service is down — the whole
 * system's readiness, for `helm test`, a global load balancer and the fault tests.
 * `/readyz?scope=gateway` is the gateway's own readiness, the chart's readinessProbe: 200 while this
 * process serves, whatever its dependencies (reported in the body), so one service's outage does not
 * take every gateway out of the Service and the Ingress — the routes that need it answer 503
 * `upstream_unavailable` themselves, the rest of the API keeps serving. Any other `scope` is a 400
 * `invalid_request` problem (passed to `next`).
 */
export function readyzHandler(readiness: Pick<ReadinessCheck, "get">): RequestHandler {
  return (req, res, next) => {
    const scope = req.query.scope;
    if (scope !== undefined && scope !== "gateway")
      return next(new ApsError("invalid_request", "scope is `gateway` (the gateway's own readiness) or absent"));
    readiness
      .get()
      .then(
        (r) =>
          void res
            .status(scope === undefined && r.status === "not_ready" ? 503 : 200)
            .json({ ...r, scope: scope ?? "system" }),
        next,
      );
  };
}
