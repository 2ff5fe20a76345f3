{{/* The release's full name, at most 40 characters so connector names fit in 63. */}}
{{- define "iggy-connectors.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Labels every object carries; a connector's objects add its selectorLabels. */}}
{{- define "iggy-connectors.baseLabels" -}}
app.kubernetes.io/part-of: iggy-connectors
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Labels of the shared objects. */}}
{{- define "iggy-connectors.labels" -}}
{{ include "iggy-connectors.baseLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* The name of one connector's objects: <fullname>-<type>-<key>, the key made DNS-safe.
     Called with (list $ $connector). */}}
{{- define "iggy-connectors.connectorName" -}}
{{- $root := index . 0 -}}
{{- $c := index . 1 -}}
{{- printf "%s-%s-%s" (include "iggy-connectors.fullname" $root) $c.type ($c.key | lower | replace "_" "-") | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The labels that select one connector's pods. Called with (list $ $connector). */}}
{{- define "iggy-connectors.selectorLabels" -}}
{{- $root := index . 0 -}}
{{- $c := index . 1 -}}
app.kubernetes.io/name: iggy-connector-runner
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ $c.type }}
iggy.apache.org/connector-key: {{ $c.key | lower | replace "_" "-" | quote }}
{{- end -}}

{{/* The API key of the chart's Secret: apiKey when set, else the one the installed Secret holds
     (so upgrades keep it), else a new random one. Never empty. */}}
{{- define "iggy-connectors.apiKey" -}}
{{- if .Values.apiKey -}}
{{- .Values.apiKey -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "iggy-connectors.secretName" .) -}}
{{- if and $existing $existing.data (index $existing.data "api-key") -}}
{{- index $existing.data "api-key" | b64dec -}}
{{- else -}}
{{- randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The fleet view's own API key (fleet.enabled), kept apart from the runners' api-key: fleet.apiKey
     when set, else the one the installed Secret holds, else a new random one. Never empty. */}}
{{- define "iggy-connectors.fleetApiKey" -}}
{{- if .Values.fleet.apiKey -}}
{{- .Values.fleet.apiKey -}}
{{- else -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "iggy-connectors.secretName" .) -}}
{{- if and $existing $existing.data (index $existing.data "fleet-api-key") -}}
{{- index $existing.data "fleet-api-key" | b64dec -}}
{{- else -}}
{{- randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The fleet view's Deployment name; its runners carry it as iggy-connectors/fleet. */}}
{{- define "iggy-connectors.fleetName" -}}
{{- printf "%s-fleet" (include "iggy-connectors.fullname" .) -}}
{{- end -}}

{{- define "iggy-connectors.secretName" -}}
{{- default (printf "%s-credentials" (include "iggy-connectors.fullname" .)) .Values.iggy.existingSecret -}}
{{- end -}}

{{- define "iggy-connectors.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "iggy-connectors.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The connector file: the TOML as written, or the fields as JSON (the runner reads either).
     Called with the connector; fails on a connector that is not one or the other. */}}
{{- define "iggy-connectors.connectorFile" -}}
{{- if not (has .type (list "sink" "source")) -}}
{{- fail (printf "connectors: %q: type must be sink or source, got %q" (toString .key) (toString .type)) -}}
{{- end -}}
{{- if not .key -}}
{{- fail (printf "connectors: a %s has no key" .type) -}}
{{- end -}}
{{- if and .config .fields -}}
{{- fail (printf "connectors: %s %q: set config or fields, not both" .type .key) -}}
{{- else if .config -}}
{{- .config -}}
{{- else if .fields -}}
{{- merge (dict "type" .type "key" .key) .fields | toJson -}}
{{- else -}}
{{- fail (printf "connectors: %s %q: needs config (TOML) or fields" .type .key) -}}
{{- end -}}
{{- end -}}

{{- define "iggy-connectors.connectorFileName" -}}
{{- if .config }}connector.toml{{ else }}connector.json{{ end -}}
{{- end -}}

{{/* "true" when the connector is a sink autoscaled by KEDA (autoscaling.enabled, and not
     `autoscaling: false` on the connector), else "". Called with (list $ $connector). */}}
{{- define "iggy-connectors.autoscaled" -}}
{{- $root := index . 0 -}}
{{- $c := index . 1 -}}
{{- if and $root.Values.autoscaling.enabled (eq $c.type "sink") (ne (toString $c.autoscaling) "false") -}}
true
{{- end -}}
{{- end -}}
