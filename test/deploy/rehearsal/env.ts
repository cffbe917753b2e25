import type { Manifest } from "../../ops/chart-tools.js";

/**
 * A container's environment as the kubelet builds it: `envFrom`, then `env` in order, values from
 * the rendered ConfigMaps and Secrets and the pod's own fields, `$(VAR)` expanded.
 */

/** What `fieldRef` reads: the pod's metadata and status as the kubelet knows them. */
export interface PodFields {
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  nodeName: string;
  serviceAccountName: string;
  /** The container's address on the rehearsal network. */
  podIP: string;
  /** The network's gateway address (the "node"). */
  hostIP: string;
}

/** A rendered object's data by key: a ConfigMap's `data`, a Secret's `stringData` and decoded `data`. */
export function dataOf(m: Manifest): Record<string, string> {
  const out: Record<string, string> = {};
  if (m.kind === "Secret") {
    for (const [k, v] of Object.entries(m.data ?? {})) out[k] = Buffer.from(v, "base64").toString("utf8");
    Object.assign(out, (m as { stringData?: Record<string, string> }).stringData ?? {});
  } else Object.assign(out, m.data ?? {});
  return out;
}

/**
 * `$(VAR)` expansion as Kubernetes does it: a reference to a defined variable is replaced, `$$`
 * becomes `$`, an undefined reference stays as written.
 */
export function expand(text: string, vars: ReadonlyMap<string, string>): string {
  return text.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)/g, (all, name: string | undefined) =>
    name === undefined ? "$" : (vars.get(name) ?? all),
  );
}

function field(path: string, pod: PodFields): string {
  const m = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(path);
  if (m) return (m[1] === "labels" ? pod.labels : pod.annotations)[m[2]!] ?? "";
  const simple: Record<string, string> = {
    "metadata.name": pod.name,
    "metadata.namespace": pod.namespace,
    "metadata.uid": pod.uid,
    "spec.nodeName": pod.nodeName,
    "spec.serviceAccountName": pod.serviceAccountName,
    "status.podIP": pod.podIP,
    "status.podIPs": pod.podIP,
    "status.hostIP": pod.hostIP,
    "status.hostIPs": pod.hostIP,
  };
  if (!(path in simple)) throw new Error(`fieldRef ${path} is not supported by the rehearsal`);
  return simple[path]!;
}

type Ref = { name: string; key: string; optional?: boolean };
type EnvVar = {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: Ref;
    configMapKeyRef?: Ref;
    resourceFieldRef?: unknown;
  };
};
type EnvFrom = {
  prefix?: string;
  configMapRef?: { name: string; optional?: boolean };
  secretRef?: { name: string; optional?: boolean };
};

/**
 * The environment of `container` (a rendered container spec) in pod `pod`, as an ordered list of
 * `[name, value]` (later entries win, as in the kubelet). `objects` are the rendered manifests;
 * ConfigMaps and Secrets are looked up by name. Throws naming the variable when a non-optional
 * reference is missing (the kubelet's CreateContainerConfigError) or a reference kind is unsupported.
 */
export function resolveEnv(
  container: { name: string; env?: EnvVar[]; envFrom?: EnvFrom[] },
  pod: PodFields,
  objects: readonly Manifest[],
): Array<[string, string]> {
  const find = (kind: "ConfigMap" | "Secret", name: string) =>
    objects.find((o) => o.kind === kind && o.metadata.name === name);
  const vars = new Map<string, string>();
  const where = (what: string) => `pod ${pod.name} container ${container.name}: ${what}`;
  for (const from of container.envFrom ?? []) {
    const ref = from.configMapRef ?? from.secretRef;
    if (!ref) throw new Error(where("envFrom without configMapRef or secretRef"));
    const obj = find(from.configMapRef ? "ConfigMap" : "Secret", ref.name);
    if (!obj) {
      if (ref.optional) continue;
      throw new Error(where(`envFrom ${ref.name} is not rendered`));
    }
    for (const [k, v] of Object.entries(dataOf(obj))) vars.set(`${from.prefix ?? ""}${k}`, v);
  }
  for (const e of container.env ?? []) {
    if (e.value !== undefined || !e.valueFrom) {
      vars.set(e.name, expand(e.value ?? "", vars));
      continue;
    }
    const vf = e.valueFrom;
    if (vf.fieldRef) vars.set(e.name, field(vf.fieldRef.fieldPath, pod));
    else if (vf.secretKeyRef || vf.configMapKeyRef) {
      const ref = (vf.secretKeyRef ?? vf.configMapKeyRef)!;
      const kind = vf.secretKeyRef ? "Secret" : "ConfigMap";
      const obj = find(kind, ref.name);
      const value = obj ? dataOf(obj)[ref.key] : undefined;
      if (value !== undefined) vars.set(e.name, value);
      else if (!ref.optional) throw new Error(where(`${e.name}: ${kind} ${ref.name} has no key ${ref.key}`));
    } else throw new Error(where(`${e.name}: valueFrom ${Object.keys(vf).join(",")} is not supported`));
  }
  return [...vars];
}
