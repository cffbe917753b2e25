{{/*
The sandbox (sandbox.enabled, docs/design/agents.md#sandbox): a second APS where nothing counts,
run by sandbox.yaml as the image's all-in-one with APS_LIVEMODE=false. These helpers give its
values, database, NATS permissions and env; networkpolicy.yaml, nats.yaml, secret.yaml and the
connection budget (_connections.tpl) read them too.
*/}}

{{/* The sandbox's values merged over .Values.defaults (as a component's are), without the HPA and PDB it does not get. Returns YAML. */}}
{{- define "aps.sandbox" -}}
{{- toYaml (mustMergeOverwrite (deepCopy (omit .Values.defaults "autoscaling" "pdb")) (deepCopy .Values.sandbox)) }}
{{- end }}

{{/* The sandbox's subject prefix and JetStream stream: the live ones' + `_sandbox` / `_SANDBOX`, so no subject of the live stream is its. */}}
{{- define "aps.sandboxPrefix" -}}
{{- printf "%s_sandbox" .Values.config.subjectPrefix -}}
{{- end }}
{{- define "aps.sandboxStream" -}}
{{- printf "%s_SANDBOX" .Values.config.natsStream -}}
{{- end }}

{{/*
The sandbox's database name: sandbox.database, else `<database>_sandbox` beside the release's —
postgresql.deployed.database, or the database of postgresql.external.url (`postgres` when its URL names none).
*/}}
{{- define "aps.sandboxDatabase" -}}
{{- if .Values.sandbox.database -}}
{{- .Values.sandbox.database -}}
{{- else if .Values.postgresql.deployed.enabled -}}
{{- printf "%s_sandbox" .Values.postgresql.deployed.database -}}
{{- else -}}
{{- printf "%s_sandbox" ((urlParse .Values.postgresql.external.url).path | trimPrefix "/" | default "postgres") -}}
{{- end -}}
{{- end }}

{{/* SANDBOX_DATABASE_URL of the chart's Secret: postgresql.external.url with the sandbox's database in its path. */}}
{{- define "aps.sandboxExternalUrl" -}}
{{- $u := urlParse .Values.postgresql.external.url }}
{{- $_ := set $u "path" (printf "/%s" (include "aps.sandboxDatabase" .)) }}
{{- urlJoin $u -}}
{{- end }}

{{/*
NATS permissions of the sandbox's user as JSON: its one process runs every deployable, each
connecting as this user, so it gets the union of natsPermissions() of every deployable on the
sandbox's prefix and stream (packages/platform/src/bus/nats-permissions.ts; test/ops/helm.test.ts
compares them) — none on a subject or stream of the live instance but the JetStream API's
`$JS.API.INFO` and `$JS.API.CONSUMER.>` that every live user has too.
*/}}
{{- define "aps.sandboxNatsPermissions" -}}
{{- $p := include "aps.sandboxPrefix" . }}
{{- $s := include "aps.sandboxStream" . }}
{{- $pub := list }}
{{- $sub := list }}
{{- range $name, $_ := .Values.components }}
{{- $perms := include "aps.natsPermissions" (dict "root" $ "name" $name "prefix" $p "stream" $s) | fromJson }}
{{- $pub = concat $pub $perms.publish.allow }}
{{- $sub = concat $sub $perms.subscribe.allow }}
{{- end }}
{{- dict "publish" (dict "allow" (uniq $pub)) "subscribe" (dict "allow" (uniq $sub)) | toJson | replace "\\u003e" ">" }}
{{- end }}

{{/*
Refuses a sandbox the release cannot place: with only per-service database URLs (no
postgresql.external.url, no existingSecret) there is no server to put its database beside.
*/}}
{{- define "aps.sandboxValidate" -}}
{{- $pg := .Values.postgresql }}
{{- if and (not $pg.deployed.enabled) (not $pg.external.url) (not .Values.secrets.existingSecret) }}
{{- fail "sandbox.enabled: its database goes beside postgresql.external.url, and there is none (only perService URLs): set postgresql.external.url, or put SANDBOX_DATABASE_URL into secrets.existingSecret (docs/design/agents.md#sandbox)" }}
{{- end }}
{{- end }}

{{/*
The sandbox container's env as YAML (a list): the all-in-one of the image with APS_LIVEMODE=false
(docs/design/agents.md#sandbox) — its own stream and prefix on the release's NATS (as its own NATS
user), its own database on the release's PostgreSQL, the live gateway's HTTP settings (it trusts
config.trustedProxies: the live gateway pods that forward to it live in the pod network), then
defaults.env and sandbox.env. Call with (dict "root" $ "s" <aps.sandbox>).
*/}}
{{- define "aps.sandboxEnv" -}}
{{- $root := .root -}}
{{- $s := .s -}}
{{- $pg := $root.Values.postgresql -}}
{{- $secret := include "aps.secretName" $root -}}
{{- $trust := $root.Values.internalTrust.enabled -}}
{{ include "aps.podEnv" $root }}
{{- include "aps.otelNameEnv" (dict "root" $root "name" "aps-sandbox") }}
- name: LOG_LEVEL
  value: {{ $root.Values.config.logLevel | quote }}
# a sandbox: sk_test_ keys, livemode: false on events and webhooks, the test clock
- name: APS_LIVEMODE
  value: "false"
{{ include "aps.streamEnv" (dict "root" $root "stream" (include "aps.sandboxStream" $root) "prefix" (include "aps.sandboxPrefix" $root)) }}
{{- include "aps.retentionEnv" $root }}
- name: APS_DATA_DIR
  value: /tmp/aps-data
{{- include "aps.natsUrlEnv" $root }}
{{- if $trust }}
{{- if $root.Values.secrets.existingSecret }}
{{- range list (list "NATS_USER" "NATS_USER_SANDBOX") (list "NATS_PASSWORD" "NATS_PASSWORD_SANDBOX") }}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (index . 1)) }}
      optional: true
{{- end }}
{{- else if $root.Values.nats.deployed.enabled }}
# its own NATS user: its prefix and stream only (nats.yaml)
- name: NATS_USER
  value: "sandbox"
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" "NATS_PASSWORD_SANDBOX") }}
{{- end }}
{{- end }}
{{- include "aps.otelEnv" $root }}
{{- include "aps.httpEnv" (dict "root" $root "port" $s.port) }}
# its search index in its own database: never the live Meilisearch index
- name: KNOWLEDGE_ENGINE
  value: "postgres"
- name: APS_START_APERTIUM
  value: "off"
- name: DATABASE_POOL_MAX
  value: {{ $s.databasePoolMax | int | toString | quote }}
# straight to the server, never through a PgBouncer: its services share one URL, each setting its
# search_path at connect, and its test clock LISTENs (docs/design/agents.md#sandbox)
- name: DATABASE_POOLER
  value: "none"
# No migration Job runs for the sandbox (migrations.yaml covers the components): it applies its
# own migrations at start, under an advisory lock per schema, on the first install and on every
# upgrade alike — never DATABASE_MIGRATIONS=verify, which would refuse to start on a new migration.
- name: DATABASE_MIGRATIONS
  value: "apply"
{{- if $pg.deployed.enabled }}
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (ternary "POSTGRES_PASSWORD_SANDBOX" "POSTGRES_PASSWORD" $trust)) }}
# its own database{{ if $trust }}, owned by its own role (the init container creates both){{ end }}
- name: DATABASE_URL
  value: {{ printf "postgresql://%s:$(POSTGRES_PASSWORD)@%s:5432/%s" (ternary "aps_sandbox" $pg.deployed.username $trust) (include "aps.postgresqlHost" $root) (include "aps.sandboxDatabase" $root) | quote }}
{{- else }}
# its own database (created at start when missing: the URL's role needs CREATEDB then)
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" "SANDBOX_DATABASE_URL") }}
{{- end }}
{{- with include "aps.caBundle" (dict "root" $root "part" "env") }}{{ . | trim | nindent 0 }}{{- end }}
{{- end }}
