import {
  InProcessBus,
  JetStreamBus,
  streamLimitsOf,
  type CommonConfig,
  type EventBus,
  type Logger,
} from "@aps/platform";

/**
 * The knowledge service's bus: JetStream when `NATS_URL` is set, else `sharedBus` (all-in-one),
 * else a private in-process bus. The service has no database (the index is the engine's).
 */
export async function openKnowledgeBus(cfg: CommonConfig, log: Logger, sharedBus?: EventBus): Promise<EventBus> {
  if (cfg.NATS_URL)
    return JetStreamBus.connect({
      servers: cfg.NATS_URL,
      stream: cfg.NATS_STREAM,
      prefix: cfg.APS_SUBJECT_PREFIX,
      connectionName: "aps-knowledge",
      log,
      limits: streamLimitsOf(cfg),
      ackWaitMs: cfg.NATS_ACK_WAIT_MS,
      user: cfg.NATS_USER,
      pass: cfg.NATS_PASSWORD,
    });
  if (sharedBus) return sharedBus;
  log.warn("NATS_URL is unset: using an in-process bus (events reach consumers in this process only)");
  return new InProcessBus(log, cfg.APS_SUBJECT_PREFIX);
}
