import { fileURLToPath } from "node:url";

/**
 * Path of the PEP dataset (docs/design/services.md#the-pep-data-set: 736 real Python Enhancement Proposals, one
 * JSON object per line): `$APS_PEPS_DATASET` when set, else `datasets/peps.jsonl` in the folder
 * beside the repository where CI puts it. Tests that need it skip loudly when it is absent and fail
 * under `APS_TEST_REQUIRE_REAL=1` (docs/design/tests.md#loud-skips).
 */
export function pepsDatasetPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.APS_PEPS_DATASET || fileURLToPath(new URL("../../../../shared/datasets/peps.jsonl", import.meta.url));
}
