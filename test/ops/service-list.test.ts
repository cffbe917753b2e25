/**
 * Guards the one list of services (packages/platform/src/topology.ts, docs/design/services.md#the-service-list):
 * every place that starts, addresses, ships or documents the services names exactly the services of
 * the list, with the list's ports. The all-in-one and the fault topology are checked by the type
 * checker (their maps are keyed by `ServiceName`); what TypeScript cannot see is checked here: the
 * `services/` folders, each service's config defaults, `deploy/local/start.mjs`, the Helm chart's
 * components, the image (Dockerfile, assemble.sh), the README's configuration table and
 * docs/design/README.md.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  defaultGrpcAddr,
  defaultListenAddr,
  entryPoint,
  GATEWAY,
  grpcAddrEnv,
  listenAddrEnv,
  SERVICES,
  type ServiceName,
} from "@aps/platform";
import { parse } from "yaml";
import { ROOT } from "../support/system.js";

const names = SERVICES.map((s) => s.name);
const deployables = [...names, GATEWAY.name];
/** Folders of services/ that run but are not a service of their own (they start the others, or call the API). */
const LAUNCHERS = ["all-in-one", "cli"];
const read = (p: string) => readFileSync(join(ROOT, p), "utf8");

describe("the one service list", () => {
  it("is consistent: unique names and ports, each service after the services it calls", () => {
    expect(new Set(names).size).toBe(names.length);
    expect(new Set([...SERVICES.map((s) => s.port), GATEWAY.port]).size).toBe(names.length + 1);
    SERVICES.forEach((s, i) => {
      for (const dep of s.dependsOn) expect(names.indexOf(dep as ServiceName)).toBeLessThan(i);
    });
  });

  it("names exactly the folders of services/ that run a service (besides the launchers)", () => {
    const dirs = readdirSync(join(ROOT, "services")).filter((d) => !LAUNCHERS.includes(d));
    expect(dirs.sort()).toEqual([...deployables].sort());
    for (const d of deployables) {
      expect(existsSync(join(ROOT, "services", d, "src/main.ts"))).toBe(true);
      expect(existsSync(join(ROOT, "services", d, "src/config.ts"))).toBe(true);
    }
  });

  it("gives each service's config its listen default and every client its dial default", async () => {
    for (const s of SERVICES) {
      const mod = (await import(`@aps/${s.name}`)) as { loadConfig(env: NodeJS.ProcessEnv): Record<string, unknown> };
      const cfg = mod.loadConfig({});
      expect(cfg[listenAddrEnv(s.name)]).toBe(defaultListenAddr(s.name));
      expect(defaultListenAddr(s.name)).toBe(`0.0.0.0:${s.port}`);
      // the addresses of the services this one calls
      for (const dep of s.dependsOn)
        expect(cfg[grpcAddrEnv(dep as ServiceName)]).toBe(defaultGrpcAddr(dep as ServiceName));
    }
    const gateway = (await import("@aps/gateway")) as { loadConfig(env: NodeJS.ProcessEnv): Record<string, unknown> };
    const gw = gateway.loadConfig({});
    expect(gw.PORT).toBe(GATEWAY.port);
    for (const s of SERVICES) expect(gw[grpcAddrEnv(s.name)]).toBe(`127.0.0.1:${s.port}`);
  });

  it("is what deploy/local/start.mjs starts, in order, each with its listen address", () => {
    const out = execFileSync(process.execPath, [join(ROOT, "deploy/local/start.mjs")], {
      cwd: ROOT,
      env: {
        ...process.env,
        APS_TOPOLOGY_PLAN: "1",
        PORT: "",
        ...Object.fromEntries(names.map((n) => [`${n.toUpperCase()}_PORT`, ""])),
      },
      encoding: "utf8",
    });
    const plan = JSON.parse(out) as { name: string; script: string; env: Record<string, string> }[];
    expect(plan.map((p) => p.name)).toEqual(deployables);
    for (const p of plan) {
      expect(p.script).toBe(entryPoint(p.name as ServiceName));
      for (const s of SERVICES) expect(p.env[grpcAddrEnv(s.name)]).toBe(`127.0.0.1:${s.port}`);
    }
    for (const s of SERVICES) {
      expect(plan.find((p) => p.name === s.name)?.env[listenAddrEnv(s.name)]).toBe(`127.0.0.1:${s.port}`);
    }
    expect(plan.at(-1)?.env.PORT).toBe(String(GATEWAY.port));
  });

  it("is the Helm chart's components: same names, entry points, ports and databases", () => {
    const values = parse(read("charts/aps/values.yaml")) as {
      components: Record<
        string,
        { script: string; protocol: string; port: number; database: boolean; service: { port: number } }
      >;
    };
    expect(Object.keys(values.components).sort()).toEqual([...deployables].sort());
    for (const s of [...SERVICES, GATEWAY]) {
      const c = values.components[s.name]!;
      expect(c.script).toBe(entryPoint(s.name));
      expect(c.port).toBe(s.port);
      expect(c.service.port).toBe(s.port);
      expect(c.database).toBe(s.database);
      expect(c.protocol).toBe(s.name === GATEWAY.name ? "http" : "grpc");
    }
  });

  it("is what the image ships and exposes", () => {
    const dockerfile = read("deploy/docker/Dockerfile");
    const expose = /^EXPOSE (.+)$/m.exec(dockerfile)?.[1]?.split(/\s+/).map(Number) ?? [];
    expect(expose.sort()).toEqual([GATEWAY.port, ...SERVICES.map((s) => s.port)].sort());
    for (const d of deployables) expect(dockerfile).toContain(entryPoint(d as ServiceName));
    // assemble.sh checks each entry point of the list exists in the image (it reads the list itself)
    expect(read("deploy/docker/assemble.sh")).toMatch(/topology\.js/);
  });

  it("is documented: the README's configuration table and docs/design/README.md", () => {
    const readme = read("README.md");
    for (const s of SERVICES) {
      expect(readme).toContain(`\`${grpcAddrEnv(s.name)}\` | ${defaultGrpcAddr(s.name)} |`);
      expect(readme).toContain(listenAddrEnv(s.name));
    }
    const arch = read("docs/design/README.md");
    for (const d of [...deployables, ...LAUNCHERS]) expect(arch).toContain(`services/${d} `);
  });
});
