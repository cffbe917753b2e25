import { spawn, execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { GATEWAY, SERVICES } from "@aps/platform/topology";
import { waitUntil } from "@aps/testkit";
import { chartTools, PROD_VALUES, renderChart, renderChartError, type Manifest, type Tools } from "./chart-tools.js";

/**
 * Rollouts that drop nothing (docs/reliability.md): every APS pod waits `preStopSeconds` before SIGTERM
 * — the Service and the Ingress stop sending it requests while it still answers — then drains
 * within a grace period the chart checks is long enough. The in-chart NATS servers enter lame duck
 * mode in their preStop (checked with the real nats-server of this machine), and a NATS cluster
 * gets a PodDisruptionBudget, one server per node and a zone spread.
 */
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;
const COMPONENTS: string[] = [GATEWAY.name, ...SERVICES.map((s) => s.name)].sort();

(skipReason ? describe.skip : describe)(
  skipReason ? `chart rollouts (SKIPPED: ${skipReason})` : "chart rollouts: a preStop wait, then the drain",
  () => {
    it.each([
      ["default", []],
      ["production", ["-f", PROD_VALUES]],
    ])("every APS pod waits before SIGTERM, within its grace period (%s values)", async (_v, args) => {
      const ms = await renderChart(tools as Tools, args);
      const deployments = ms.filter((m) => m.kind === "Deployment" && m.metadata.name.startsWith("aps-"));
      const seen = deployments
        .map((d) => {
          const spec = d.spec.template.spec;
          const cmd: string[] = spec.containers[0].lifecycle?.preStop?.exec?.command ?? [];
          const ms = Number(/setTimeout\(\(\) => \{\}, (\d+)\)/.exec(cmd.join(" "))?.[1] ?? 0);
          return { name: d.metadata.name.slice(4), waitS: ms / 1000, graceS: spec.terminationGracePeriodSeconds };
        })
        .filter((d) => COMPONENTS.includes(d.name));
      expect(seen.map((d) => d.name).sort()).toEqual(COMPONENTS);
      for (const d of seen) expect({ ...d, ok: d.waitS >= 5 && d.graceS >= d.waitS + 10 }).toEqual({ ...d, ok: true });
    });

    it("refuses a grace period the wait and the drain do not fit in, and renders no wait at 0", async () => {
      expect(
        await renderChartError(tools as Tools, [
          "--set",
          "defaults.preStopSeconds=25",
          "--set",
          "defaults.terminationGracePeriodSeconds=30",
        ]),
      ).toMatch(/terminationGracePeriodSeconds 30 must be at least preStopSeconds 25 \+ 10/);
      const ms = await renderChart(tools as Tools, ["--set", "defaults.preStopSeconds=0"]);
      const gw = ms.find((m) => m.kind === "Deployment" && m.metadata.name === "aps-gateway")!;
      expect(gw.spec.template.spec.containers[0].lifecycle).toBeUndefined();
    });

    it("behind the in-chart PgBouncer every database pool moves its connections within clientMaxLifetimeSeconds, inside PgBouncer's grace period", async () => {
      // PgBouncer 1.23's SIGTERM waits for its clients to leave; pools that never let a busy
      // connection go kept it until the grace period cut it under a query (the production rehearsal: 9 × 503)
      const ms = await renderChart(tools as Tools, [
        "--set",
        "postgresql.deployed.enabled=true",
        "--set",
        "pgbouncer.enabled=true",
      ]);
      const bouncer = ms.find((m) => m.kind === "Deployment" && m.metadata.name === "aps-pgbouncer")!;
      const graceS = bouncer.spec.template.spec.terminationGracePeriodSeconds as number;
      const pooled = ms.filter(
        (m) =>
          m.kind === "Deployment" &&
          (m.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }> | undefined)?.some(
            (e) => e.name === "DATABASE_POOLER" && e.value === "transaction",
          ),
      );
      expect(pooled.length).toBeGreaterThan(0);
      for (const d of pooled) {
        const env = d.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
        const lifetimeS = Number(env.find((e) => e.name === "DATABASE_MAX_LIFETIME_SECONDS")?.value ?? 0);
        expect({ name: d.metadata.name, ok: lifetimeS > 0 && graceS >= lifetimeS + 10 }).toEqual({
          name: d.metadata.name,
          ok: true,
        });
      }
      expect(
        await renderChartError(tools as Tools, [
          "--set",
          "postgresql.deployed.enabled=true",
          "--set",
          "pgbouncer.enabled=true",
          "--set",
          "pgbouncer.clientMaxLifetimeSeconds=60",
          "--set",
          "pgbouncer.terminationGracePeriodSeconds=30",
        ]),
      ).toMatch(/terminationGracePeriodSeconds 30 must be at least clientMaxLifetimeSeconds 60 \+ 10/);
    });

    const natsSet = (ms: Manifest[]) => ({
      sts: ms.find((m) => m.kind === "StatefulSet" && m.metadata.name === "aps-nats")!,
      conf: ms.find((m) => m.kind === "ConfigMap" && m.metadata.name === "aps-nats")!.data!["nats.conf"]!,
      pdb: ms.find((m) => m.kind === "PodDisruptionBudget" && m.metadata.name === "aps-nats"),
    });

    it("NATS enters lame duck mode in its preStop, by its pid file, and the wait fits in the grace period", async () => {
      const { sts, conf } = natsSet(await renderChart(tools as Tools));
      const spec = sts.spec.template.spec;
      const c = spec.containers[0];
      const pidFile = /^\s*pid_file: (\S+)$/m.exec(conf)?.[1];
      const duckS = Number(/^\s*lame_duck_duration: (\d+)s$/m.exec(conf)?.[1]);
      const graceS = Number(/^\s*lame_duck_grace_period: (\d+)s$/m.exec(conf)?.[1]);
      expect(pidFile).toBeDefined();
      const cmd = (c.lifecycle.preStop.exec.command as string[]).join(" ");
      expect(cmd).toContain(`nats-server --signal ldm=${pidFile}`);
      const waitS = Number(/sleep (\d+)/.exec(cmd)?.[1]);
      expect(waitS).toBeGreaterThanOrEqual(duckS + graceS);
      expect(spec.terminationGracePeriodSeconds).toBeGreaterThan(waitS);
      // the pid file's folder is writable under the read-only root filesystem
      const mount = c.volumeMounts.find((v: { mountPath: string }) => pidFile!.startsWith(v.mountPath + "/"));
      expect(spec.volumes.find((v: { name: string }) => v.name === mount?.name)?.emptyDir).toBeDefined();
    });

    const natsServer = ["/usr/sbin/nats-server", "/usr/local/bin/nats-server"].find((p) => existsSync(p));
    (natsServer ? it : it.skip)(
      natsServer
        ? "the rendered preStop puts a real nats-server in lame duck mode: it stops accepting clients"
        : "the rendered preStop puts a real nats-server in lame duck mode (SKIPPED: no nats-server binary)",
      async () => {
        const { sts, conf } = natsSet(await renderChart(tools as Tools));
        const dir = mkdtempSync(join(tmpdir(), "aps-ldm-"));
        const pidFile = /^\s*pid_file: (\S+)$/m.exec(conf)![1]!;
        // the rendered lame duck settings, the pid file moved into a folder of this test
        const lines = conf
          .split("\n")
          .filter((l) => /^\s*(lame_duck_duration|lame_duck_grace_period|pid_file):/.test(l))
          .map((l) => l.replace(pidFile, join(dir, "nats.pid")));
        writeFileSync(join(dir, "nats.conf"), `port: -1\nlisten: 127.0.0.1:-1\n${lines.join("\n")}\n`);
        const server = spawn(natsServer!, ["-c", join(dir, "nats.conf"), "-a", "127.0.0.1", "-p", "-1", "-DV"], {
          stdio: ["ignore", "pipe", "pipe"],
        });
        let log = "";
        server.stderr.on("data", (d: Buffer) => (log += d.toString()));
        server.stdout.on("data", (d: Buffer) => (log += d.toString()));
        try {
          await waitUntil("the server listens", () =>
            /Listening for client connections on 127\.0\.0\.1:(\d+)/.test(log),
          );
          const port = Number(/Listening for client connections on 127\.0\.0\.1:(\d+)/.exec(log)![1]);
          const cmd = (sts.spec.template.spec.containers[0].lifecycle.preStop.exec.command as string[])
            .join(" ")
            .replace(/ && sleep \d+.*$/, "")
            .replace(/^\/bin\/sh -c /, "")
            .replace("nats-server", natsServer!)
            .replace(pidFile, join(dir, "nats.pid"));
          await promisify(execFile)("/bin/sh", ["-c", cmd]);
          await waitUntil("lame duck mode", () => /Entering lame duck mode/.test(log));
          // a new client is turned away (refused, or closed without the server's INFO)
          const greeted = await new Promise<boolean>((resolve) => {
            const sock = connect(port, "127.0.0.1");
            let data = "";
            sock.on("data", (d) => (data += d.toString()));
            sock.on("error", () => resolve(false));
            sock.on("close", () => resolve(data.startsWith("INFO")));
            sock.setTimeout(2_000, () => sock.destroy());
          });
          expect(greeted).toBe(false);
        } finally {
          server.kill("SIGKILL");
          rmSync(dir, { recursive: true, force: true });
        }
      },
      60_000,
    );

    it("a NATS cluster gets a PodDisruptionBudget, one server per node (soft or hard) and a zone spread; one server gets none", async () => {
      const ha = ["--set", "nats.deployed.replicas=3", "--set", "config.natsStreamReplicas=3"];
      const soft = natsSet(await renderChart(tools as Tools, ha));
      expect(soft.pdb?.spec).toMatchObject({ maxUnavailable: 1 });
      const affinity = soft.sts.spec.template.spec.affinity.podAntiAffinity;
      expect(affinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey).toBe(
        "kubernetes.io/hostname",
      );
      expect(soft.sts.spec.template.spec.topologySpreadConstraints[0].topologyKey).toBe("topology.kubernetes.io/zone");
      const hard = natsSet(await renderChart(tools as Tools, [...ha, "--set", "nats.deployed.podAntiAffinity=hard"]));
      expect(
        hard.sts.spec.template.spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution,
      ).toHaveLength(1);
      const single = natsSet(await renderChart(tools as Tools));
      expect(single.pdb).toBeUndefined();
      expect(single.sts.spec.template.spec.affinity).toBeUndefined();
    });

    it("a changed Secret rolls the APS pods (checksum/secret); the same one does not; an existing Secret is the operator's", async () => {
      const sum = async (args: string[]) => {
        // fixed generated secrets, as a cluster's upgrade reads them back from the live Secret
        const fixed = ["internalTrust.seed=r", "postgresql.deployed.password=r", "meilisearch.deployed.masterKey=r"];
        const ms = await renderChart(tools as Tools, [...fixed.flatMap((f) => ["--set", f]), ...args]);
        const gw = ms.find((m) => m.kind === "Deployment" && m.metadata.name === "aps-gateway")!;
        return gw.spec.template.metadata.annotations["checksum/secret"] as string | undefined;
      };
      const token = (c: string) => ["--set", `secrets.adminToken=${c.repeat(40)}`];
      const a = await sum(token("a"));
      expect(a).toMatch(/^[0-9a-f]{64}$/);
      expect(await sum(token("a"))).toBe(a);
      expect(await sum(token("b"))).not.toBe(a);
      expect(await sum(["-f", PROD_VALUES])).toBeUndefined();
    });
  },
);
