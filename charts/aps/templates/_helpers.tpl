{{/* Chart name. */}}
{{- define "aps.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: <release>-<chart>, or the release name when it already contains the chart name. */}}
{{- define "aps.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of a component's resources: <fullname>-<component>. Call with (dict "root" $ "name" "gateway"). */}}
{{- define "aps.componentName" -}}
{{- printf "%s-%s" (include "aps.fullname" .root) .name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "aps.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Selector labels (stable across upgrades): name + instance (+ component). Call with (dict "root" $ "component" "gateway"). */}}
{{- define "aps.selectorLabels" -}}
app.kubernetes.io/name: {{ include "aps.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- if .component }}
app.kubernetes.io/component: {{ .component }}
{{- end }}
{{- end }}

{{/* Common labels. Call with (dict "root" $ "component" "gateway"); component may be empty. */}}
{{- define "aps.labels" -}}
helm.sh/chart: {{ include "aps.chart" .root }}
{{ include "aps.selectorLabels" . }}
app.kubernetes.io/version: {{ .root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: aps
{{- end }}

{{/* Labels shared by every APS application pod of this release (NetworkPolicy peers). */}}
{{- define "aps.appPodSelector" -}}
app.kubernetes.io/name: {{ include "aps.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
aps.dev/tier: app
{{- end }}

{{/*
  An image reference: `[global.imageRegistry/]repository` then `@digest` when set, else `:tag`.
  With global.imageRegistry the repository's own registry host (a first path segment with a dot, a
  colon or `localhost`) is replaced: every image of the release comes from one (private) registry.
  Call with (dict "root" $ "image" <image values> "defaultTag" <tag when none>).
*/}}
{{- define "aps.imageRef" -}}
{{- $repo := .image.repository }}
{{- with .root.Values.global.imageRegistry }}
{{- $parts := splitList "/" $repo }}
{{- $first := first $parts }}
{{- if and (gt (len $parts) 1) (or (contains "." $first) (contains ":" $first) (eq $first "localhost")) }}
{{- $repo = join "/" (rest $parts) }}
{{- end }}
{{- $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}
{{- end }}
{{- if .image.digest -}}
{{ $repo }}@{{ .image.digest }}
{{- else -}}
{{ $repo }}:{{ default .defaultTag .image.tag }}
{{- end -}}
{{- end }}

{{/* The APS image (image.*; the tag defaults to the chart's appVersion). */}}
{{- define "aps.image" -}}
{{ include "aps.imageRef" (dict "root" . "image" .Values.image "defaultTag" .Chart.AppVersion) }}
{{- end }}

{{/*
  `imagePullSecrets:` of every pod spec of the release: global.imagePullSecrets and imagePullSecrets,
  nothing when both are empty. Call with the root context; indent with nindent.
*/}}
{{- define "aps.imagePullSecrets" -}}
{{- $secrets := concat (.Values.global.imagePullSecrets | default list) (.Values.imagePullSecrets | default list) | uniq }}
{{- if $secrets }}
imagePullSecrets:
  {{- toYaml $secrets | nindent 2 }}
{{- end }}
{{- end }}

{{- define "aps.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "aps.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Name of the Secret holding URLs and tokens (the chart's own or secrets.existingSecret). */}}
{{- define "aps.secretName" -}}
{{- default (include "aps.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{/* A component merged over the shared defaults. Call with (dict "root" $ "name" "gateway"); returns YAML. */}}
{{- define "aps.component" -}}
{{- $c := index .root.Values.components .name }}
{{- $merged := mustMergeOverwrite (deepCopy .root.Values.defaults) (deepCopy $c) }}
{{- if and (eq .name "knowledge") (eq .root.Values.search.engine "postgres") }}
{{- /* search.engine: postgres — the index in knowledge's own schema, no Meilisearch (docs/design/search-and-translation.md#search-engines) */}}
{{- $merged = mustMergeOverwrite $merged (dict "database" true "search" false "env" (dict "KNOWLEDGE_ENGINE" "postgres")) }}
{{- end }}
{{- toYaml $merged }}
{{- end }}

{{/* "true" when the chart deploys Meilisearch: meilisearch.deployed.enabled and search.engine meilisearch. */}}
{{- define "aps.meiliDeployed" -}}
{{- and .Values.meilisearch.deployed.enabled (eq .Values.search.engine "meilisearch") }}
{{- end }}

{{- define "aps.postgresqlHost" -}}
{{ include "aps.fullname" . }}-postgresql
{{- end }}

{{- define "aps.natsHost" -}}
{{ include "aps.fullname" . }}-nats
{{- end }}

{{- define "aps.meilisearchHost" -}}
{{ include "aps.fullname" . }}-meilisearch
{{- end }}

{{/* MEILISEARCH_URL alone (no key): the gateway reports the search engine in GET /v1/capabilities (docs/design/agents.md#discovery). */}}
{{- define "aps.searchUrlEnv" -}}
{{- $m := .Values.meilisearch -}}
{{- if eq .Values.search.engine "meilisearch" }}
- name: MEILISEARCH_URL
{{- if $m.deployed.enabled }}
  value: {{ printf "http://%s:7700" (include "aps.meilisearchHost" .) | quote }}
{{- else if $m.external.url }}
  value: {{ $m.external.url | quote }}
{{- else }}
  valueFrom:
    secretKeyRef:
      name: {{ include "aps.secretName" . }}
      key: {{ include "aps.secretKey" (dict "root" . "key" "MEILISEARCH_URL") }}
{{- end }}
{{- end }}
{{- end }}

{{/* Search env for a component with `search: true` (the knowledge service, docs/design/search-and-translation.md#search-engines). */}}
{{- define "aps.searchEnv" -}}
{{- $m := .Values.meilisearch -}}
{{ include "aps.searchUrlEnv" . }}
- name: MEILISEARCH_API_KEY
  valueFrom:
    secretKeyRef:
      name: {{ include "aps.secretName" . }}
{{- if $m.deployed.enabled }}
      key: {{ include "aps.secretKey" (dict "root" . "key" "MEILI_MASTER_KEY") }}
{{- else }}
      key: {{ include "aps.secretKey" (dict "root" . "key" "MEILISEARCH_API_KEY") }}
      optional: true
{{- end }}
{{- end }}

{{/*
Validation of the dependency choices: each of PostgreSQL and NATS must be either external (a URL,
or an existingSecret that carries it) or deployed by this chart — exactly one.
*/}}
{{- define "aps.validate" -}}
{{- $pg := .Values.postgresql }}
{{- $pgExternal := or $pg.external.url (gt (len (default (dict) $pg.external.perService)) 0) }}
{{- $existing := .Values.secrets.existingSecret }}
{{- if and $pg.deployed.enabled $pgExternal }}
{{- fail "PostgreSQL: set either postgresql.external.url (or perService URLs) or postgresql.deployed.enabled=true, not both" }}
{{- end }}
{{- if not (or $pg.deployed.enabled $pgExternal $existing) }}
{{- fail "PostgreSQL is not configured: set postgresql.external.url (an external server), or postgresql.deployed.enabled=true (a StatefulSet in this release), or secrets.existingSecret with a DATABASE_URL key" }}
{{- end }}
{{- if and (not $pg.external.url) (not $pg.deployed.enabled) $pg.external.perService }}
{{- range $name, $_c := .Values.components }}
{{- $c := include "aps.component" (dict "root" $ "name" $name) | fromYaml }}
{{- if and $c.enabled $c.database (not (hasKey $pg.external.perService $name)) }}
{{- fail (printf "PostgreSQL: postgresql.external.perService has no URL for %s and there is no postgresql.external.url to fall back on" $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- $nats := .Values.nats }}
{{- if and $nats.deployed.enabled $nats.external.url }}
{{- fail "NATS: set either nats.external.url or nats.deployed.enabled=true, not both" }}
{{- end }}
{{- if not (or $nats.deployed.enabled $nats.external.url $existing) }}
{{- fail "NATS JetStream is not configured: set nats.external.url (an external JetStream server), or nats.deployed.enabled=true (a StatefulSet in this release), or secrets.existingSecret with a NATS_URL key" }}
{{- end }}
{{- with .Values.secrets.adminToken }}
{{- if lt (len .) 32 }}
{{- fail "secrets.adminToken must be at least 32 characters (e.g. openssl rand -hex 32): the gateway refuses a shorter APS_ADMIN_TOKEN (docs/design/operations.md#chart-defaults-against-abuse)" }}
{{- end }}
{{- end }}
{{- $meili := .Values.meilisearch }}
{{- if eq .Values.search.engine "meilisearch" }}
{{- if and $meili.deployed.enabled $meili.external.url }}
{{- fail "Meilisearch: set either meilisearch.external.url or meilisearch.deployed.enabled=true, not both" }}
{{- end }}
{{- if not (or $meili.deployed.enabled $meili.external.url $existing) }}
{{- fail "Meilisearch is not configured: set meilisearch.external.url (an external server), or meilisearch.deployed.enabled=true (a StatefulSet in this release), or secrets.existingSecret with a MEILISEARCH_URL key" }}
{{- end }}
{{- end }}
{{- range $name, $c := .Values.components }}
{{- if not (has $c.protocol (list "http" "grpc")) }}
{{- fail (printf "components.%s.protocol must be http or grpc" $name) }}
{{- end }}
{{- if and $c.service.headless (ne $c.service.type "ClusterIP") }}
{{- fail (printf "components.%s.service.headless needs service.type ClusterIP (a headless Service has no cluster IP to expose)" $name) }}
{{- end }}
{{- end }}
{{- end }}

{{/* Env shared by every application container. */}}
{{- define "aps.commonEnv" -}}
{{- $root := . -}}
{{ include "aps.podEnv" . }}
- name: LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
{{ include "aps.streamEnv" (dict "root" . "stream" .Values.config.natsStream "prefix" .Values.config.subjectPrefix) }}
{{- include "aps.retentionEnv" . }}
- name: APS_DATA_DIR
  value: /tmp/aps-data
{{- range $name, $c := .Values.components }}
{{- if and $c.enabled (eq $c.protocol "grpc") }}
{{- /* a headless Service: every pod's address on its container port, balanced round_robin by the client (docs/design/services.md#balancing-and-connection-age) */}}
- name: {{ upper $name }}_GRPC_ADDR
  {{- if $c.service.headless }}
  value: {{ printf "dns:///%s:%v" (include "aps.componentName" (dict "root" $root "name" $name)) $c.port | quote }}
  {{- else }}
  value: {{ printf "%s:%v" (include "aps.componentName" (dict "root" $root "name" $name)) $c.service.port | quote }}
  {{- end }}
{{- end }}
{{- end }}
{{- include "aps.natsUrlEnv" . }}
{{- include "aps.otelEnv" . }}
{{- end }}

{{/* POD_NAME and POD_NAMESPACE from the downward API (OTEL_RESOURCE_ATTRIBUTES refers to them). */}}
{{- define "aps.podEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}

{{/* The JetStream stream and subject prefix of an instance and its stream settings. Call with (dict "root" $ "stream" "APS" "prefix" "aps"). */}}
{{- define "aps.streamEnv" -}}
- name: NATS_STREAM
  value: {{ .stream | quote }}
- name: NATS_ACK_WAIT_MS
  value: {{ .root.Values.config.natsAckWaitMs | int | toString | quote }}
- name: NATS_STREAM_REPLICAS
  value: {{ .root.Values.config.natsStreamReplicas | int | toString | quote }}
- name: APS_SUBJECT_PREFIX
  value: {{ .prefix | quote }}
{{- end }}

{{/* Retention of the tables that only grow (docs/retention.md, docs/design/operations.md#retention). Starts with a newline. */}}
{{- define "aps.retentionEnv" -}}
{{- with .Values.config.retention }}
- name: RETENTION_INTERVAL_MS
  value: {{ .intervalMs | int | toString | quote }}
- name: RETENTION_BATCH_SIZE
  value: {{ .batchSize | int | toString | quote }}
- name: FEED_RETENTION
  value: {{ .feed | quote }}
- name: RETENTION_OUTBOX
  value: {{ .outbox | quote }}
- name: RETENTION_PROCESSED_EVENTS
  value: {{ .processedEvents | quote }}
- name: RETENTION_IDEMPOTENCY
  value: {{ .idempotency | quote }}
- name: RETENTION_DAILY_COUNTERS
  value: {{ .dailyCounters | quote }}
- name: RETENTION_VOTE_HISTORY
  value: {{ .voteHistory | quote }}
- name: RETENTION_INBOX
  value: {{ .inbox | quote }}
- name: RETENTION_DELIVERIES
  value: {{ .deliveries | quote }}
- name: RETENTION_EXPIRED
  value: {{ .expired | quote }}
{{- end }}
{{- end }}

{{/* NATS_URL: the in-chart NATS, or the Secret's. Starts with a newline. */}}
{{- define "aps.natsUrlEnv" -}}
{{- if .Values.nats.deployed.enabled }}
- name: NATS_URL
  value: {{ printf "nats://%s:4222" (include "aps.natsHost" .) | quote }}
{{- else }}
- name: NATS_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "aps.secretName" . }}
      key: {{ include "aps.secretKey" (dict "root" . "key" "NATS_URL") }}
{{- end }}
{{- end }}

{{/* The OpenTelemetry exporter (otel.endpoint), or the SDK off. Starts with a newline. */}}
{{- define "aps.otelEnv" -}}
{{- if .Values.otel.endpoint }}
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ .Values.otel.endpoint | quote }}
- name: OTEL_EXPORTER_OTLP_PROTOCOL
  value: {{ .Values.otel.protocol | quote }}
- name: OTEL_TRACES_EXPORTER
  value: otlp
- name: OTEL_METRICS_EXPORTER
  value: otlp
- name: OTEL_PROPAGATORS
  value: tracecontext,baggage
{{- else }}
- name: OTEL_SDK_DISABLED
  value: "true"
{{- end }}
{{- end }}

{{/* Database env for a component that owns a schema. Call with (dict "root" $ "name" "forum"). */}}
{{- define "aps.databaseEnv" -}}
{{- $root := .root -}}
{{- $secret := include "aps.secretName" $root -}}
{{- $pg := $root.Values.postgresql -}}
{{- $c := include "aps.component" (dict "root" $root "name" .name) | fromYaml -}}
{{- $bouncer := and $root.Values.pgbouncer.enabled $pg.deployed.enabled -}}
{{- $user := ternary (printf "aps_%s" .name) $pg.deployed.username $root.Values.internalTrust.enabled -}}
- name: DATABASE_POOL_MAX
  value: {{ $c.databasePoolMax | int | toString | quote }}
{{- /* upgrades: the migration Job applied them, the pods verify (migrations.yaml); the first install migrates at start */}}
- name: DATABASE_MIGRATIONS
  value: {{ ternary "verify" "apply" (and $root.Values.migrations.job.enabled (not $root.Release.IsInstall)) | quote }}
{{- if $bouncer }}
{{- /* through the in-chart PgBouncer (transaction mode); migrations to the server (docs/design/operations.md#connection-budget-and-pgbouncer) */}}
- name: DATABASE_POOLER
  value: "transaction"
{{- /* a stopping PgBouncer pod waits for its clients to leave: each connection moves within this (docs/reliability.md "Rollouts") */}}
- name: DATABASE_MAX_LIFETIME_SECONDS
  value: {{ $root.Values.pgbouncer.clientMaxLifetimeSeconds | int | toString | quote }}
{{- else }}
- name: DATABASE_POOLER
  value: {{ $root.Values.config.databasePooler | quote }}
{{- end }}
{{- if and $pg.deployed.enabled $root.Values.internalTrust.enabled }}
{{- /* its own role aps_<name>, owner of its schema only (docs/design/services.md#caller-policy-and-internal-trust) */}}
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (printf "POSTGRES_PASSWORD_%s" (upper .name))) }}
{{- else if $pg.deployed.enabled }}
- name: POSTGRES_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" "POSTGRES_PASSWORD") }}
{{- end }}
{{- if and $pg.deployed.enabled $bouncer }}
- name: DATABASE_URL
  value: {{ printf "postgresql://%s:$(POSTGRES_PASSWORD)@%s:6432/aps_%s" $user (include "aps.pgbouncerHost" $root) .name | quote }}
- name: DATABASE_MIGRATION_URL
  value: {{ printf "postgresql://%s:$(POSTGRES_PASSWORD)@%s:5432/%s" $user (include "aps.postgresqlHost" $root) $pg.deployed.database | quote }}
{{- else if $pg.deployed.enabled }}
- name: DATABASE_URL
  value: {{ printf "postgresql://%s:$(POSTGRES_PASSWORD)@%s:5432/%s" $user (include "aps.postgresqlHost" $root) $pg.deployed.database | quote }}
{{- else }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" "DATABASE_URL") }}
      {{- /* an existing Secret may hold only per-service URLs (`aps chart-secret`); a service with neither refuses to start, saying so */}}
      optional: {{ not $pg.external.url }}
- name: {{ upper .name }}_DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (printf "%s_DATABASE_URL" (upper .name))) }}
      optional: true
- name: {{ upper .name }}_DATABASE_MIGRATION_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (printf "%s_DATABASE_MIGRATION_URL" (upper .name))) }}
      optional: true
- name: DATABASE_MIGRATION_URL
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" "DATABASE_MIGRATION_URL") }}
      optional: true
{{- end }}
{{- end }}

{{/*
Internal trust (docs/design/services.md#caller-policy-and-internal-trust): the generated secrets of every enabled component,
as YAML {key: value}: APS_INTERNAL_TOKEN_<NAME> (its gRPC token), NATS_PASSWORD_<NAME> (in-chart
NATS), POSTGRES_PASSWORD_<NAME> (its role aps_<name> on the in-chart PostgreSQL), the sandbox's
NATS_PASSWORD_SANDBOX and POSTGRES_PASSWORD_SANDBOX (sandbox.enabled), and NATS_PASSWORD_OPERATOR.
Each is read back from the live Secret when it exists, else random (or derived from
internalTrust.seed, for reproducible renders in tests only). Computed once per render
(kept in .Values._apsTrust): secret.yaml and components.yaml must see the same values.
*/}}
{{- define "aps.trustSecrets" -}}
{{- if not (hasKey .Values "_apsTrust") }}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "aps.fullname" .) }}
{{- $data := ($existing | default dict).data | default dict }}
{{- $out := dict }}
{{- $keys := list }}
{{- if .Values.internalTrust.enabled }}
{{- range $name, $_c := .Values.components }}
{{- $c := include "aps.component" (dict "root" $ "name" $name) | fromYaml }}
{{- if $c.enabled }}
{{- $keys = append $keys (printf "APS_INTERNAL_TOKEN_%s" (upper $name)) }}
{{- if $.Values.nats.deployed.enabled }}
{{- $keys = append $keys (printf "NATS_PASSWORD_%s" (upper $name)) }}
{{- end }}
{{- if and $c.database $.Values.postgresql.deployed.enabled }}
{{- $keys = append $keys (printf "POSTGRES_PASSWORD_%s" (upper $name)) }}
{{- end }}
{{- end }}
{{- end }}
{{- if .Values.sandbox.enabled }}
{{- /* the sandbox's NATS user and PostgreSQL role (sandbox.yaml); no gRPC token: its services call each other in-process */}}
{{- if .Values.nats.deployed.enabled }}
{{- $keys = append $keys "NATS_PASSWORD_SANDBOX" }}
{{- end }}
{{- if .Values.postgresql.deployed.enabled }}
{{- $keys = append $keys "POSTGRES_PASSWORD_SANDBOX" }}
{{- end }}
{{- end }}
{{- if .Values.nats.deployed.enabled }}
{{- $keys = append $keys "NATS_PASSWORD_OPERATOR" }}
{{- end }}
{{- end }}
{{- range $keys }}
{{- /* nats-server reads $NATS_PASSWORD_* as a config value, not a string: one that starts with a digit
       parses as a number, size or date ("5G2…" stops the server), so a new secret starts with a letter */}}
{{- if $.Values.internalTrust.seed }}
{{- $_ := set $out . (printf "s%s" (printf "%s:%s" $.Values.internalTrust.seed . | sha256sum | trunc 47)) }}
{{- else if index $data . }}
{{- $_ := set $out . (index $data . | b64dec) }}
{{- else }}
{{- $_ := set $out . (printf "%s%s" (randAlpha 1) (randAlphaNum 47)) }}
{{- end }}
{{- end }}
{{- $_ := set .Values "_apsTrust" $out }}
{{- end }}
{{- toYaml .Values._apsTrust }}
{{- end }}

{{/* APS_PEER_DIGESTS of component .name: <caller>=sha256(token) of every other enabled component. Call with (dict "root" $ "name" "forum"). */}}
{{- define "aps.peerDigests" -}}
{{- $secrets := include "aps.trustSecrets" .root | fromYaml }}
{{- $me := .name }}
{{- $out := list }}
{{- range $name, $c := .root.Values.components }}
{{- if and $c.enabled (ne $name $me) }}
{{- $out = append $out (printf "%s=%s" $name (index $secrets (printf "APS_INTERNAL_TOKEN_%s" (upper $name)) | sha256sum)) }}
{{- end }}
{{- end }}
{{- join "," $out }}
{{- end }}

{{/*
NATS permissions of component .name as JSON: the same lists as natsPermissions() in
packages/platform/src/bus/nats-permissions.ts (test/ops/helm.test.ts compares them).
Call with (dict "root" $ "name" "forum"), and "prefix" / "stream" for another instance's (the sandbox's).
*/}}
{{- define "aps.natsPermissions" -}}
{{- $p := .prefix | default .root.Values.config.subjectPrefix }}
{{- $s := .stream | default .root.Values.config.natsStream }}
{{- $durables := dict "forum" (list "forum-status" "forum-case-projection") "identity" (list "identity-sagacity") "council" (list "council-agenda") "knowledge" (list "knowledge-index") "notifications" (list "notifications-feed" "notifications-audit") }}
{{- $js := list "$JS.API.INFO" (printf "$JS.API.STREAM.INFO.%s" $s) "$JS.API.CONSUMER.>" (printf "$JS.ACK.%s.>" $s) }}
{{- if eq .name "gateway" }}
{{- dict "publish" (dict "allow" (append $js (printf "$JS.API.STREAM.MSG.GET.%s" $s))) "subscribe" (dict "allow" (list "_INBOX.>" (printf "%s.>" $p))) | toJson | replace "\\u003e" ">" }}
{{- else }}
{{- $pub := list (printf "%s.%s.>" $p .name) }}
{{- range (index $durables .name | default list) }}
{{- $pub = append $pub (printf "%s.dlq.%s" $p .) }}
{{- end }}
{{- $pub = concat $pub $js (list (printf "$JS.API.STREAM.CREATE.%s" $s) (printf "$JS.API.STREAM.UPDATE.%s" $s)) }}
{{- dict "publish" (dict "allow" $pub) "subscribe" (dict "allow" (list "_INBOX.>")) | toJson | replace "\\u003e" ">" }}
{{- end }}
{{- end }}

{{/* Internal-trust env of component .name (docs/design/services.md#caller-policy-and-internal-trust): its gRPC token, the digests it accepts, its NATS user. */}}
{{- define "aps.trustEnv" -}}
{{- $root := .root -}}
{{- $secret := include "aps.secretName" $root -}}
{{- $N := upper .name -}}
{{- if $root.Values.internalTrust.enabled }}
{{- if $root.Values.secrets.existingSecret }}
{{- /* required: a Secret without them would turn internal trust off silently (`aps chart-secret` prints a complete one) */}}
{{- range list (list "APS_INTERNAL_TOKEN" (printf "APS_INTERNAL_TOKEN_%s" $N)) (list "APS_PEER_DIGESTS" (printf "APS_PEER_DIGESTS_%s" $N)) }}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (index . 1)) }}
{{- end }}
{{- /* optional: an external NATS may have no users */}}
{{- range list (list "NATS_USER" (printf "NATS_USER_%s" $N)) (list "NATS_PASSWORD" (printf "NATS_PASSWORD_%s" $N)) }}
- name: {{ index . 0 }}
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (index . 1)) }}
      optional: true
{{- end }}
{{- else }}
- name: APS_INTERNAL_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (printf "APS_INTERNAL_TOKEN_%s" $N)) }}
- name: APS_PEER_DIGESTS
  value: {{ include "aps.peerDigests" . | quote }}
{{- if $root.Values.nats.deployed.enabled }}
- name: NATS_USER
  value: {{ .name | quote }}
- name: NATS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $secret }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" (printf "NATS_PASSWORD_%s" $N)) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Where a pod may run (docs/operations/install.md "Scheduling"): nodeSelector, tolerations,
affinity and priorityClassName from a dict with those keys, each only when set. Used with
.Values.global.scheduling for the chart's dependencies (PostgreSQL, NATS, Meilisearch, PgBouncer,
the backup and test pods) and with each component's merged values for the APS pods.
*/}}
{{- define "aps.scheduling" -}}
{{- with .nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .priorityClassName }}
priorityClassName: {{ . | quote }}
{{- end }}
{{- end }}

{{/*
The CA bundle of .Values.global.caBundle (a ConfigMap's key) for an APS container: its env
(NODE_EXTRA_CA_CERTS: Node adds it to the roots it trusts for outbound TLS — webhooks, an external
database, the OTel collector, Meilisearch), its volumeMount and its volume. Call with (dict "root" $ "part" "env"|"mount"|"volume").
*/}}
{{- define "aps.caBundle" -}}
{{- $ca := .root.Values.global.caBundle -}}
{{- if $ca.configMap }}
{{- if eq .part "env" }}
- name: NODE_EXTRA_CA_CERTS
  value: {{ printf "/etc/aps/ca/%s" $ca.key | quote }}
{{- else if eq .part "mount" }}
- name: ca-bundle
  mountPath: /etc/aps/ca
  readOnly: true
{{- else }}
- name: ca-bundle
  configMap:
    name: {{ $ca.configMap | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The key of the release's Secret that holds `.key` (docs/operations/secrets.md): with
secrets.existingSecret, secrets.existingSecretKeys may rename it (`{DATABASE_URL: db-url}`: a Secret
made by another tool); otherwise, and for every key not in that map, the key is its own name.
Call with (dict "root" $ "key" "DATABASE_URL").
*/}}
{{- define "aps.secretKey" -}}
{{- if .root.Values.secrets.existingSecret -}}
{{- index (.root.Values.secrets.existingSecretKeys | default dict) .key | default .key -}}
{{- else -}}
{{- .key -}}
{{- end -}}
{{- end }}

{{/* The sandbox Service's URL, the gateway's SANDBOX_URL (sandbox.enabled, docs/design/agents.md#sandbox). */}}
{{- define "aps.sandboxUrl" -}}
{{- printf "http://%s:%v" (include "aps.componentName" (dict "root" . "name" "sandbox")) .Values.sandbox.port -}}
{{- end }}
