import ms from "ms";
import { z } from "zod";
import {
  BALLOT_SEALINGS,
  commonEnvSchema,
  defaultGrpcAddr,
  defaultListenAddr,
  grpcAddr,
  intVar,
  optionalVar,
  parseEnv,
} from "@aps/platform";

/** A duration such as `7d`, `12h`, `90s` or a number of milliseconds (the `ms` package's syntax). */
const duration = (def: string) =>
  z
    .string()
    .default(def)
    .transform((v, ctx) => {
      const n = /^\d+$/.test(v) ? Number(v) : ms(v as ms.StringValue);
      if (typeof n !== "number" || !Number.isFinite(n) || n <= 0) {
        ctx.addIssue({ code: "custom", message: "expected a duration like 7d, 12h, 30m or milliseconds" });
        return z.NEVER;
      }
      return n;
    });

/** Env schema of the council service (README "Configuration"). */
export const councilEnvSchema = commonEnvSchema.extend({
  COUNCIL_LISTEN_ADDR: grpcAddr(defaultListenAddr("council")),
  COUNCIL_DATABASE_URL: optionalVar(),
  /** Its own direct URL for migrations (wins over DATABASE_MIGRATION_URL): per-service roles behind a pooler, docs/operations/secrets.md. */
  COUNCIL_DATABASE_MIGRATION_URL: optionalVar(),
  IDENTITY_GRPC_ADDR: grpcAddr(defaultGrpcAddr("identity")),
  FORUM_GRPC_ADDR: grpcAddr(defaultGrpcAddr("forum")),
  /** Time from a case's opening to its deadline close (docs/design/council.md#statuses-and-the-lifecycle-rule, default 7 days); ms after parsing. */
  COUNCIL_DEADLINE: duration("7d"),
  /**
   * How long an outcome decided by ballots waits before it is final, ms (docs/reference/council.md
   * "Last call"; default 24 h, after rfcbot's final comment period and IETF Last Call): a concern
   * raised in it holds an adoption, a changed ballot re-decides. 0 closes at the deciding ballot.
   */
  LAST_CALL_MS: intVar(86_400_000, 0),
  /**
   * Who reads a ballot's position and reason before its case closes (docs/reference/council.md
   * "Sealed ballots"): `until_closed` (default) its caster only, `until_vote` also councillors who
   * have cast a position, `off` everyone. A case keeps the sealing it opened with.
   */
  BALLOT_SEALING: z.enum(BALLOT_SEALINGS).default("until_closed"),
  /**
   * Operator-diverse adoption (docs/design/council.md#operator-diverse-adoption): an adoption
   * needs approve ballots from at least this many distinct verified owner domains (an integer ≥ 0;
   * default 0, off). A case keeps the k it opened with.
   */
  COUNCIL_MIN_OWNERS: intVar(0, 0),
  /** How often the scheduler closes due cases, ms (default 5 000). */
  COUNCIL_TICK_MS: intVar(5_000, 10),
});

/** Typed council config (`COUNCIL_DEADLINE` in ms). */
export type CouncilConfig = z.infer<typeof councilEnvSchema> & { databaseUrl: string | undefined };

/** Parses the council service's config from `env`; throws listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv): CouncilConfig {
  const c = parseEnv(councilEnvSchema, env);
  return {
    ...c,
    databaseUrl: c.COUNCIL_DATABASE_URL ?? c.DATABASE_URL,
    DATABASE_MIGRATION_URL: c.COUNCIL_DATABASE_MIGRATION_URL ?? c.DATABASE_MIGRATION_URL,
  };
}
