#!/usr/bin/env node
// The previous commit's APS image, for the production rehearsal's rollback and upgrade
// (docs/operations/rehearsal.md): a temporary git worktree of the commit (default HEAD~1), its own
// `scripts/image.mjs` run there — the image is built from that commit's sources, as its CI built it
// — tagged `aps:previous` (or --tag), then the worktree removed. The base images are this
// machine's (`npm run image -- --infra` made them).
//
//   npm run rehearsal:previous [-- --ref <commit>] [-- --tag aps:previous]
//   APS_REHEARSAL_PREVIOUS_IMAGE=aps:previous npm run rehearsal
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({
  options: { ref: { type: "string", default: "HEAD~1" }, tag: { type: "string", default: "aps:previous" } },
});

/** Runs a command with inherited output; exits with its status when it fails. */
function run(cmd, args, cwd) {
  const r = spawnSync(cmd, args, { cwd, stdio: "inherit" });
  if (r.status !== 0) {
    console.error(`${cmd} ${args.join(" ")} failed (exit ${r.status})`);
    process.exitCode = r.status ?? 1;
    return false;
  }
  return true;
}

const dir = join(mkdtempSync(join(tmpdir(), "aps-previous-")), "src");
if (run("git", ["worktree", "add", "--detach", dir, values.ref], ROOT)) {
  try {
    if (run(process.execPath, ["scripts/image.mjs", "--tag", values.tag], dir))
      console.log(`previous image: ${values.tag} from ${values.ref}`);
  } finally {
    run("git", ["worktree", "remove", "--force", dir], ROOT);
    rmSync(dirname(dir), { recursive: true, force: true });
  }
}
