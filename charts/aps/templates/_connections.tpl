{{/*
PostgreSQL connection budget (docs/design/operations.md#connection-budget-and-pgbouncer). Every pod of a component that owns a
schema keeps up to DATABASE_POOL_MAX (`databasePoolMax`) connections, and a component runs up to
its HPA's maxReplicas (its `replicas` without autoscaling). Without PgBouncer their sum must fit in
postgresql.maxConnections − postgresql.reservedConnections (the reserve: superuser slots, the one
direct migration connection a starting pod opens, an operator's psql). With the in-chart PgBouncer
the services' connections are its clients (≤ pgbouncer.maxClientConn per PgBouncer pod) and the
server sees only its pools: replicas × poolSize × (one entry per component). The sandbox
(sandbox.enabled) connects to the server directly, PgBouncer or not: per replica, each of its
in-process services (one per entry of `components`) keeps up to its databasePoolMax, and its test
clock 2 (a pool of one and a LISTEN connection). A render that does not fit fails, naming each term.
*/}}
{{- define "aps.connectionBudget" -}}
{{- $root := . }}
{{- $pg := .Values.postgresql }}
{{- $limit := sub (int $pg.maxConnections) (int $pg.reservedConnections) }}
{{- $clients := 0 }}
{{- $entries := 0 }}
{{- $terms := list }}
{{- range $name, $_ := .Values.components }}
{{- $c := include "aps.component" (dict "root" $root "name" $name) | fromYaml }}
{{- if and $c.enabled $c.database }}
{{- $max := ternary (int $c.autoscaling.maxReplicas) (int $c.replicas) (and (hasKey $c "autoscaling") $c.autoscaling.enabled) }}
{{- $pool := int $c.databasePoolMax }}
{{- $clients = add $clients (mul $pool $max) }}
{{- $entries = add $entries 1 }}
{{- $terms = append $terms (printf "%s %d×%d" $name $pool $max) }}
{{- end }}
{{- end }}
{{- $sandbox := 0 }}
{{- $sandboxTerm := "" }}
{{- if .Values.sandbox.enabled }}
{{- $s := include "aps.sandbox" . | fromYaml }}
{{- $services := len .Values.components }}
{{- $sandbox = mul (int $s.replicas) (add (mul $services (int $s.databasePoolMax)) 2) }}
{{- $sandboxTerm = printf "sandbox (%d×%d + 2)×%d" $services (int $s.databasePoolMax) (int $s.replicas) }}
{{- end }}
{{- if .Values.pgbouncer.enabled }}
{{- $pb := .Values.pgbouncer }}
{{- $server := add (mul (int $pb.replicas) (mul (int $pb.poolSize) $entries)) $sandbox }}
{{- if gt $server $limit }}
{{- fail (printf "PostgreSQL connection budget exceeded: PgBouncer's server pools pgbouncer.replicas %d × pgbouncer.poolSize %d × %d components%s = %d > postgresql.maxConnections %d − postgresql.reservedConnections %d = %d (docs/design/operations.md#connection-budget-and-pgbouncer)" (int $pb.replicas) (int $pb.poolSize) $entries (ternary (printf " + %s" $sandboxTerm) "" (gt $sandbox 0)) $server (int $pg.maxConnections) (int $pg.reservedConnections) $limit) }}
{{- end }}
{{- $accept := mul (int $pb.replicas) (int $pb.maxClientConn) }}
{{- if gt $clients $accept }}
{{- fail (printf "PgBouncer client budget exceeded: databasePoolMax × max replicas (%s) = %d > pgbouncer.replicas %d × pgbouncer.maxClientConn %d = %d (docs/design/operations.md#connection-budget-and-pgbouncer)" (join ", " $terms) $clients (int $pb.replicas) (int $pb.maxClientConn) $accept) }}
{{- end }}
{{- else if gt (add $clients $sandbox) $limit }}
{{- if $sandboxTerm }}
{{- $terms = append $terms $sandboxTerm }}
{{- end }}
{{- fail (printf "PostgreSQL connection budget exceeded: databasePoolMax × max replicas (%s) = %d > postgresql.maxConnections %d − postgresql.reservedConnections %d = %d; lower databasePoolMax or autoscaling.maxReplicas, raise postgresql.maxConnections, or enable pgbouncer (docs/design/operations.md#connection-budget-and-pgbouncer)" (join ", " $terms) (add $clients $sandbox) (int $pg.maxConnections) (int $pg.reservedConnections) $limit) }}
{{- end }}
{{- end }}

{{/* The PgBouncer Service's host name. */}}
{{- define "aps.pgbouncerHost" -}}
{{- printf "%s-pgbouncer" (include "aps.fullname" .) -}}
{{- end }}
