import { randomBytes } from "node:crypto";
import { linkSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GATEWAY, SERVICES, tokenDigest, type Logger } from "@aps/platform";

/** Name of the all-in-one's internal token file in `APS_DATA_DIR` (mode 0600). */
export const INTERNAL_TOKEN_FILE = "internal-token";

/** The all-in-one's internal trust: the env its services start with and the token a second gateway or a tool presents. */
export interface AllInOneTrust {
  /** `env` with `APS_INTERNAL_TOKEN` and `APS_PEER_DIGESTS` set (unchanged when the operator set either). */
  env: NodeJS.ProcessEnv;
  /** The token every deployable name is accepted with on this process's gRPC ports; undefined when the operator set only digests. */
  token: string | undefined;
}

/**
 * The all-in-one's gRPC ports on loopback serve a second gateway and tooling (its own clients call in-process);
 * with no caller check any local process could call them — grant itself a Council seat, say
 * (docs/operations/secrets.md "The all-in-one's internal token"). So unless the operator set
 * `APS_INTERNAL_TOKEN` or `APS_PEER_DIGESTS`, the all-in-one keeps one secret in
 * `<dataDir>/internal-token` (32 random bytes, base64url; made on first start with mode 0600,
 * read on later starts) and every one of its gRPC servers accepts it from any deployable name
 * (`APS_PEER_DIGESTS`: the gateway and each name of SERVICES → its digest); its own clients call in-process
 * and are not checked. A caller presents `aps-caller: gateway` and `authorization: Bearer <token>`.
 *
 * @param env the env as given; returned as is when either trust variable is non-empty
 * @param dataDir `APS_DATA_DIR` (created when absent)
 * @throws Error when the file is readable or writable by group or others (names the `chmod`), or holds fewer than 32 characters
 */
export function allInOneTrust(env: NodeJS.ProcessEnv, dataDir: string, log: Logger): AllInOneTrust {
  if (env.APS_INTERNAL_TOKEN || env.APS_PEER_DIGESTS) return { env, token: env.APS_INTERNAL_TOKEN || undefined };
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, INTERNAL_TOKEN_FILE);
  const token = readOrCreateToken(file, log);
  const digest = tokenDigest(token).toString("hex");
  return {
    env: {
      ...env,
      APS_INTERNAL_TOKEN: token,
      APS_PEER_DIGESTS: [GATEWAY.name, ...SERVICES.map((s) => s.name)].map((name) => `${name}=${digest}`).join(","),
    },
    token,
  };
}

/**
 * Reads the token in `file`, or makes it when there is none: written whole to a private temp file
 * (mode 0600), then hard-linked to `file`, which fails when it exists — so two processes starting
 * on one folder agree on the first one's token and neither reads a half-written file.
 */
function readOrCreateToken(file: string, log: Logger): string {
  const token = randomBytes(32).toString("base64url");
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(tmp, `${token}\n`, { mode: 0o600, flag: "wx" });
  try {
    linkSync(tmp, file);
    log.info({ file }, "made the internal token: this process's gRPC ports accept only callers that present it");
    return token;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  } finally {
    rmSync(tmp, { force: true });
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0)
    throw new Error(
      `${file} is open to other users (mode ${mode.toString(8)}): it guards this process's gRPC ports; run \`chmod 600 ${file}\``,
    );
  const kept = readFileSync(file, "utf8").trim();
  if (kept.length < 32)
    throw new Error(`${file} holds ${kept.length} characters, fewer than 32: delete it to make a new token`);
  return kept;
}
