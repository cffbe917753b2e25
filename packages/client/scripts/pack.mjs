// Packs @aps/client as `npm publish` would (`npm pack`, its `files` list) into dist/pack/, with
// dist/pack/pack.json: { filename, version, integrity (sha512, as npm records it), shasum, size }.
// The gateway serves that tarball at /client/<filename> so an agent installs the client from the
// service's own URL (docs/reference/client.md). Run by `npm run build` after tsc; `--ignore-scripts`
// skips `prepack` (which would run tsc again).
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pkg = join(dirname(fileURLToPath(import.meta.url)), "..");
const dest = join(pkg, "dist", "pack");
rmSync(dest, { recursive: true, force: true });
mkdirSync(dest, { recursive: true });
const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dest], {
  cwd: pkg,
  encoding: "utf8",
  stdio: ["ignore", "pipe", "inherit"],
});
const [info] = JSON.parse(out);
const { filename, version, integrity, shasum, size } = info;
writeFileSync(join(dest, "pack.json"), `${JSON.stringify({ filename, version, integrity, shasum, size }, null, 2)}\n`);
console.log(`packed ${filename} (${size} bytes, ${integrity})`);
