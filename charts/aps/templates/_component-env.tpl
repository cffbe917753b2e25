{{/*
The env of component .name's container (.c: its values merged over .Values.defaults): the common
env, OTel names, its listen port or HTTP settings, trust, search and database env, its Secret keys
and its own `env`. Shared by its Deployment (components.yaml) and its migration Job
(migrations.yaml), so the Job parses exactly the config the pods will.
*/}}
{{- define "aps.componentEnv" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $c := .c -}}
{{- include "aps.commonEnv" $root | trim | nindent 0 }}
{{- include "aps.otelNameEnv" (dict "root" $root "name" (printf "aps-%s" $name)) }}
{{- if eq $c.protocol "http" }}
{{- include "aps.httpEnv" (dict "root" $root "port" $c.port) }}
{{- if $root.Values.sandbox.enabled }}
# the sandbox instance (sandbox.enabled): requests with an sk_test_ key, /v1/sandbox/… and /v1/test/… go there (docs/design/agents.md#sandbox)
- name: SANDBOX_URL
  value: {{ include "aps.sandboxUrl" $root | quote }}
{{- end }}
# what GET /v1/capabilities reports (docs/design/agents.md#discovery): the search engine (URL only, no key)
# and the translation engine the translation component is configured with
{{- include "aps.searchUrlEnv" $root | trim | nindent 0 }}
{{- with (($root.Values.components.translation).env).TRANSLATION_ENGINE }}
- name: TRANSLATION_ENGINE
  value: {{ . | quote }}
{{- end }}
- name: APS_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "aps.secretName" $root }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" "APS_ADMIN_TOKEN") }}
      optional: true
{{- else }}
- name: {{ upper $name }}_LISTEN_ADDR
  value: {{ printf "0.0.0.0:%v" $c.port | quote }}
{{- if $root.Values.metrics.enabled }}
- name: METRICS_PORT
  value: {{ $root.Values.metrics.port | quote }}
{{- end }}
{{- end }}
{{- include "aps.trustEnv" (dict "root" $root "name" $name) | trim | nindent 0 }}
{{- if $c.search }}
{{- include "aps.searchEnv" $root | trim | nindent 0 }}
{{- end }}
{{- if $c.database }}
{{- include "aps.databaseEnv" (dict "root" $root "name" $name) | trim | nindent 0 }}
{{- end }}
{{- range $c.secretEnv }}
- name: {{ . }}
  valueFrom:
    secretKeyRef:
      name: {{ include "aps.secretName" $root }}
      key: {{ include "aps.secretKey" (dict "root" $root "key" .) }}
      optional: true
{{- end }}
{{- with include "aps.caBundle" (dict "root" $root "part" "env") }}{{ . | trim | nindent 0 }}{{- end }}
{{- range $k, $v := $c.env }}
- name: {{ $k }}
  value: {{ $v | toString | quote }}
{{- end }}
{{- end }}

{{/* OTEL_SERVICE_NAME .name and the k8s resource attributes. Starts with a newline; after aps.podEnv. */}}
{{- define "aps.otelNameEnv" -}}
{{- $root := .root }}
# after POD_NAME / POD_NAMESPACE: $(VAR) only expands variables defined earlier
- name: OTEL_SERVICE_NAME
  value: {{ .name | quote }}
- name: OTEL_RESOURCE_ATTRIBUTES
  value: {{ printf "service.namespace=aps,service.version=%s,k8s.namespace.name=$(POD_NAMESPACE),k8s.pod.name=$(POD_NAME)%s" $root.Chart.AppVersion (ternary (printf ",%s" $root.Values.otel.resourceAttributes) "" (ne $root.Values.otel.resourceAttributes "")) | quote }}
{{- end }}

{{/*
The HTTP settings of a gateway listening on .port: its address, its metrics port, the public base
URL, the proxies it trusts and the bounds of its event streams. Starts with a newline. Call with
(dict "root" $ "port" 8080).
*/}}
{{- define "aps.httpEnv" -}}
{{- $root := .root }}
- name: PORT
  value: {{ .port | quote }}
- name: HOST
  value: "0.0.0.0"
{{- if $root.Values.metrics.enabled }}
# /metrics on its own port, never on the public one behind the Ingress (docs/design/operations.md#metrics)
- name: METRICS_PORT
  value: {{ $root.Values.metrics.port | quote }}
{{- end }}
{{- with $root.Values.config.publicBaseUrl }}
- name: PUBLIC_BASE_URL
  value: {{ . | quote }}
{{- end }}
{{- with $root.Values.config.trustedProxies }}
- name: TRUSTED_PROXIES
  value: {{ . | quote }}
{{- end }}
{{- with $root.Values.config.eventStreams }}
# bounds of GET /v1/events/stream (docs/design/events.md#event-stream-sse)
- name: EVENT_STREAMS_PER_SOURCE
  value: {{ .perSource | int | toString | quote }}
- name: EVENT_STREAMS_PER_AGENT
  value: {{ .perAgent | int | toString | quote }}
- name: EVENT_STREAMS_PER_REPLICA
  value: {{ .perReplica | int | toString | quote }}
- name: EVENT_STREAM_MAX_BUFFER_BYTES
  value: {{ .maxBufferBytes | int | toString | quote }}
- name: EVENT_STREAM_MAX_AGE_MS
  value: {{ .maxAgeMs | int | toString | quote }}
{{- end }}
{{- end }}
