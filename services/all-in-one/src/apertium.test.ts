import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@aps/platform";
import { loadConfig as gatewayConfig } from "@aps/gateway";
import { loadConfig as translationConfig } from "@aps/translation";
import { APY_PROGRAM, decideApertium, findOnPath, startApertium, withApertium } from "./apertium.js";
import { loadConfig } from "./config.js";

/**
 * The decision to start Apertium APY (docs/design/search-and-translation.md#translation-engines), on real folders and files: a PATH of
 * temporary folders, executables and modes folders made here. Runs everywhere (APY itself is not
 * needed: see test/e2e/apertium-autostart.test.ts for the real server).
 */
let root: string;
let bin1: string;
let bin2: string;
let modes: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "aps-apy-"));
  bin1 = join(root, "bin1");
  bin2 = join(root, "bin2");
  modes = join(root, "modes");
  for (const d of [bin1, bin2, modes]) mkdirSync(d);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

function program(dir: string, mode: number): string {
  const file = join(dir, APY_PROGRAM);
  writeFileSync(file, "#!/bin/sh\nexit 0\n");
  chmodSync(file, mode);
  return file;
}

describe("findOnPath (like `command -v`)", () => {
  it("finds the first executable in PATH order, skipping non-executable files, folders and relative entries", () => {
    expect(findOnPath(APY_PROGRAM, `${bin1}:${bin2}`)).toBeUndefined();
    program(bin1, 0o644); // not executable
    mkdirSync(join(bin2, "x"), { recursive: true });
    expect(findOnPath(APY_PROGRAM, `${bin1}:${bin2}`)).toBeUndefined();
    const second = program(bin2, 0o755);
    expect(findOnPath(APY_PROGRAM, `relative:${bin1}:${bin2}`)).toBe(second);
    const first = program(bin1, 0o755);
    expect(findOnPath(APY_PROGRAM, `${bin1}:${bin2}`)).toBe(first);
    expect(findOnPath(APY_PROGRAM, `${bin2}:${bin1}`)).toBe(second);
    expect(findOnPath(APY_PROGRAM, "")).toBeUndefined();
    expect(findOnPath(APY_PROGRAM, undefined)).toBeUndefined();
    expect(findOnPath("x", bin2)).toBeUndefined(); // a folder is not a program
  });
});

describe("decideApertium: PATH lookup → engine config", () => {
  const on = { mode: "auto" as const, modesDir: "" };
  beforeAll(() => {
    program(bin1, 0o755);
    on.modesDir = modes;
  });

  it("starts APY when no engine is configured, the mode is auto, apertium-apy is on the PATH and the pairs exist", () => {
    expect(decideApertium({ PATH: `${bin1}` }, on)).toEqual({
      start: true,
      program: join(bin1, APY_PROGRAM),
      modesDir: modes,
    });
    expect(decideApertium({ PATH: `${bin1}`, TRANSLATION_ENGINE: "" }, on).start).toBe(true);
  });

  it("does not, and says why, when an engine is configured, the mode is off, APY is missing or has no pairs", () => {
    expect(decideApertium({ PATH: bin1, TRANSLATION_ENGINE: "openai" }, on)).toEqual({
      start: false,
      reason: "TRANSLATION_ENGINE=openai is configured",
    });
    expect(decideApertium({ PATH: bin1 }, { ...on, mode: "off" })).toEqual({
      start: false,
      reason: "APS_START_APERTIUM=off",
    });
    expect(decideApertium({ PATH: join(root, "nowhere") }, on)).toEqual({
      start: false,
      reason: "apertium-apy is not on the PATH",
    });
    expect(decideApertium({ PATH: bin1 }, { ...on, modesDir: join(root, "no-modes") })).toEqual({
      start: false,
      reason: `no language pairs at ${join(root, "no-modes")}`,
    });
  });

  it("the all-in-one's config: auto by default, Debian's modes folder, off on request, nothing else", () => {
    expect(loadConfig({}).APS_START_APERTIUM).toBe("auto");
    expect(loadConfig({}).APS_APERTIUM_MODES).toBe("/usr/share/apertium/modes");
    expect(loadConfig({ APS_START_APERTIUM: "off" }).APS_START_APERTIUM).toBe("off");
    expect(() => loadConfig({ APS_START_APERTIUM: "yes" })).toThrow(/APS_START_APERTIUM/);
  });

  it("the started engine is what the translation service and the gateway (GET /v1/capabilities) read", () => {
    const env = withApertium({ PATH: bin1 }, "http://127.0.0.1:2737");
    const t = translationConfig(env);
    expect(t.TRANSLATION_ENGINE).toBe("apertium");
    expect(t.APERTIUM_URL).toBe("http://127.0.0.1:2737");
    expect(gatewayConfig(env).TRANSLATION_ENGINE).toBe("apertium");
    // without it, no engine: translation answers 503 and capabilities say so
    expect(translationConfig({}).TRANSLATION_ENGINE).toBeFalsy();
  });
});

describe("startApertium", () => {
  it("fails with the program's own words when it exits instead of serving (a stand-in program that exits 3)", async () => {
    const bad = join(root, "exits");
    writeFileSync(bad, "#!/bin/sh\necho 'no pairs here' >&2\nexit 3\n");
    chmodSync(bad, 0o755);
    const log = createLogger("apy-test", "silent");
    await expect(startApertium(bad, modes, log, 10_000)).rejects.toThrow(/exited \(3\): no pairs here/);
  });
});
