import { chartTools, PROD_VALUES, renderChart, renderChartError, type Manifest, type Tools } from "./chart-tools.js";

/**
 * The chart's capacity settings: the JetStream stream's replicas
 * (`config.natsStreamReplicas` → NATS_STREAM_REPLICAS, 3 in values-production.yaml) and the in-chart
 * NATS as a 3-server JetStream cluster (docs/design/events.md#stream-replicas); the PostgreSQL connection budget — pool ×
 * max replicas summed over the services ≤ max_connections − reserve, a render that does not fit
 * fails — and the optional PgBouncer in transaction mode with the services' DATABASE_URL on it and
 * their migrations on the server (docs/design/operations.md#connection-budget-and-pgbouncer). Rendered with the same helm as test/ops/helm.test.ts
 * (scripts/helm.mjs), manifests validated against the Kubernetes schemas.
 */
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;
const render = (args: string[] = []) => renderChart(tools as Tools, args);
const renderError = (args: string[]) => renderChartError(tools as Tools, args);

const find = (ms: Manifest[], kind: string, name: string) => {
  const m = ms.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m) throw new Error(`${kind}/${name} not rendered`);
  return m;
};
const envOf = (m: Manifest): Record<string, any> =>
  Object.fromEntries((m.spec.template.spec.containers[0].env ?? []).map((e: any) => [e.name, e]));
const DB_SERVICES = ["gateway", "identity", "forum", "council", "notifications", "translation"];
const ALL_SERVICES = [...DB_SERVICES, "knowledge"];

(skipReason ? describe.skip : describe)(
  skipReason ? `charts/aps capacity (SKIPPED: ${skipReason})` : "charts/aps capacity",
  () => {
    it("defaults: stream replicas 1, one NATS server, pools of 5 (notifications 12) within max_connections 100 − 10, no pooler", async () => {
      const ms = await render();
      for (const s of ALL_SERVICES)
        expect(envOf(find(ms, "Deployment", `aps-${s}`)).NATS_STREAM_REPLICAS.value).toBe("1");
      for (const s of DB_SERVICES) {
        const env = envOf(find(ms, "Deployment", `aps-${s}`));
        // notifications' pool is sized from its webhook concurrency, ⌈16 / 2⌉ + 4 (docs/design/notifications.md#connection-pool)
        expect([env.DATABASE_POOL_MAX.value, env.DATABASE_POOLER.value]).toEqual([
          s === "notifications" ? "12" : "5",
          "none",
        ]);
        expect(env.DATABASE_URL.value).toMatch(/@aps-postgresql:5432\/aps$/);
      }
      const nats = find(ms, "StatefulSet", "aps-nats");
      expect(nats.spec.replicas).toBe(1);
      expect(find(ms, "ConfigMap", "aps-nats").data!["nats.conf"]).not.toMatch(/cluster\s*\{/);
      expect(find(ms, "StatefulSet", "aps-postgresql").spec.template.spec.containers[0].args).toEqual([
        "-c",
        "max_connections=100",
      ]);
      expect(ms.some((m) => m.metadata.name.startsWith("aps-pgbouncer"))).toBe(false);
    });

    it("values-production.yaml: 3 stream replicas, DATABASE_URL a PgBouncer in transaction mode, migrations on DATABASE_MIGRATION_URL", async () => {
      const ms = await render(["-f", PROD_VALUES]);
      for (const s of ALL_SERVICES)
        expect(envOf(find(ms, "Deployment", `aps-${s}`)).NATS_STREAM_REPLICAS.value).toBe("3");
      for (const s of DB_SERVICES) {
        const env = envOf(find(ms, "Deployment", `aps-${s}`));
        expect(env.DATABASE_POOLER.value).toBe("transaction");
        expect(env.DATABASE_MIGRATION_URL.valueFrom.secretKeyRef).toEqual({
          name: "aps-secrets",
          key: "DATABASE_MIGRATION_URL",
          optional: true,
        });
      }
    });

    it("the in-chart NATS forms a 3-server JetStream cluster for 3 stream replicas (and refuses more replicas than servers)", async () => {
      const args = ["-f", PROD_VALUES, "--set", "nats.deployed.enabled=true", "--set", "networkPolicy.natsTo=null"];
      const ms = await render(args);
      const nats = find(ms, "StatefulSet", "aps-nats");
      expect([nats.spec.replicas, nats.spec.podManagementPolicy]).toEqual([3, "Parallel"]);
      expect(nats.spec.template.spec.containers[0].args).toContain("-js");
      expect(nats.spec.template.spec.containers[0].ports.map((p: any) => p.containerPort)).toContain(6222);
      expect(find(ms, "Service", "aps-nats").spec.ports.map((p: any) => p.port)).toContain(6222);
      const conf = find(ms, "ConfigMap", "aps-nats").data!["nats.conf"] ?? "";
      expect(conf).toMatch(/jetstream\s*\{[^}]*sync_interval:\s*always/);
      const routes = [...conf.matchAll(/nats-route:\/\/(\S+):6222/g)].map((m) => m[1]);
      expect(routes).toEqual([0, 1, 2].map((i) => `aps-nats-${i}.aps-nats.aps.svc`));
      const policy = find(ms, "NetworkPolicy", "aps-nats-cluster");
      expect(policy.spec.ingress[0].ports).toEqual([{ port: 6222, protocol: "TCP" }]);
      for (const s of ALL_SERVICES)
        expect(envOf(find(ms, "Deployment", `aps-${s}`)).NATS_STREAM_REPLICAS.value).toBe("3");

      expect(await renderError(["--set", "config.natsStreamReplicas=3"])).toMatch(
        /config.natsStreamReplicas 3 needs at least that many NATS servers: nats.deployed.replicas is 1/,
      );
    });

    it("fails to render when pool × max replicas exceeds max_connections − reserve, and renders when it fits", async () => {
      const autoscale = ["--set", "defaults.autoscaling.enabled=true", "--set", "defaults.autoscaling.maxReplicas=10"];
      expect(await renderError(autoscale)).toMatch(
        /PostgreSQL connection budget exceeded: databasePoolMax × max replicas \(council 5×10, forum 5×10, gateway 5×10, identity 5×10, notifications 12×10, translation 5×10\) = 370 > postgresql.maxConnections 100 − postgresql.reservedConnections 10 = 90/,
      );
      // a per-component pool counts: the gateway's 40 alone breaks the default budget
      expect(
        await renderError(["--set", "components.gateway.databasePoolMax=40", "--set", "components.gateway.replicas=3"]),
      ).toMatch(/gateway 40×3/);
      const ms = await render([...autoscale, "--set", "postgresql.maxConnections=380"]);
      expect(find(ms, "StatefulSet", "aps-postgresql").spec.template.spec.containers[0].args).toEqual([
        "-c",
        "max_connections=380",
      ]);
      // 5 × 1×10 + notifications 4×10 = 90
      await render([
        ...autoscale,
        "--set",
        "defaults.databasePoolMax=1",
        "--set",
        "components.notifications.databasePoolMax=4",
      ]);
    });

    it("pgbouncer.enabled: a transaction-mode PgBouncer per schema owner, DATABASE_URL on it, migrations direct; its server pools within the budget", async () => {
      const args = [
        "--set",
        "pgbouncer.enabled=true",
        "--set",
        "defaults.autoscaling.enabled=true",
        "--set",
        "defaults.autoscaling.maxReplicas=10",
      ];
      const ms = await render(args);
      const ini = find(ms, "ConfigMap", "aps-pgbouncer").data!["pgbouncer.ini"];
      expect(ini).toMatch(/pool_mode = transaction/);
      for (const s of DB_SERVICES) {
        expect(ini).toContain(
          `aps_${s} = host=aps-postgresql port=5432 dbname=aps user=aps_${s} connect_query='SET search_path TO ${s}'`,
        );
        const env = envOf(find(ms, "Deployment", `aps-${s}`));
        expect(env.DATABASE_URL.value).toBe(`postgresql://aps_${s}:$(POSTGRES_PASSWORD)@aps-pgbouncer:6432/aps_${s}`);
        expect(env.DATABASE_MIGRATION_URL.value).toBe(
          `postgresql://aps_${s}:$(POSTGRES_PASSWORD)@aps-postgresql:5432/aps`,
        );
        expect(env.DATABASE_POOLER.value).toBe("transaction");
        const egress = find(ms, "NetworkPolicy", `aps-${s}`).spec.egress.flatMap((r: any) =>
          (r.ports ?? []).map((p: any) => p.port),
        );
        expect(egress).toEqual(expect.arrayContaining([5432, 6432]));
      }
      const bouncer = find(ms, "Deployment", "aps-pgbouncer");
      expect(bouncer.spec.replicas).toBe(2);
      const script = bouncer.spec.template.spec.containers[0].args[0];
      for (const s of DB_SERVICES) expect(script).toContain(`aps_${s} "$POSTGRES_PASSWORD_${s.toUpperCase()}"`);
      expect(find(ms, "Service", "aps-pgbouncer").spec.ports[0].port).toBe(6432);
      // 2 pods × 7 × 6 entries = 84 ≤ 90; 2 × 8 × 6 = 96 is not
      expect(await renderError([...args, "--set", "pgbouncer.poolSize=8"])).toMatch(
        /PgBouncer's server pools pgbouncer.replicas 2 × pgbouncer.poolSize 8 × 6 components = 96 > postgresql.maxConnections 100 − postgresql.reservedConnections 10 = 90/,
      );
      expect(await renderError([...args, "--set", "pgbouncer.maxClientConn=100"])).toMatch(
        /PgBouncer client budget exceeded: .* = 370 > pgbouncer.replicas 2 × pgbouncer.maxClientConn 100 = 200/,
      );
      expect(await renderError(["-f", PROD_VALUES, "--set", "pgbouncer.enabled=true"])).toMatch(
        /pgbouncer.enabled fronts the in-chart PostgreSQL/,
      );
    });
  },
);
