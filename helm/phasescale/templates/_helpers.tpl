{{/* The release's full name: the release name, with the chart name unless it contains it. */}}
{{- define "phasescale.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 54 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 54 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The operator's objects: Deployment, ServiceAccount, Service, ClusterRole, ... */}}
{{- define "phasescale.operatorName" -}}
{{- printf "%s-operator" (include "phasescale.fullname" .) -}}
{{- end -}}

{{- define "phasescale.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "phasescale.operatorName" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "phasescale.leaseName" -}}
{{- default (include "phasescale.operatorName" .) .Values.leaderElection.leaseName -}}
{{- end -}}

{{- define "phasescale.prometheusSecretName" -}}
{{- if .Values.prometheus.existingSecret -}}
{{- .Values.prometheus.existingSecret -}}
{{- else if .Values.prometheus.token -}}
{{- printf "%s-prometheus" (include "phasescale.fullname" .) -}}
{{- end -}}
{{- end -}}

{{- define "phasescale.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "phasescale.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: operator
{{- end -}}

{{- define "phasescale.labels" -}}
{{ include "phasescale.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Checks of the values that no schema can express; rendered (empty) by deployment.yaml. */}}
{{- define "phasescale.validate" -}}
{{- if and (gt (int .Values.replicaCount) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicaCount > 1 needs leaderElection.enabled: true (only the Lease holder may act)" -}}
{{- end -}}
{{- if not .Values.prometheus.url -}}
{{- fail "prometheus.url is required" -}}
{{- end -}}
{{- if and .Values.prometheus.existingSecret .Values.prometheus.token -}}
{{- fail "give prometheus.existingSecret or prometheus.token, not both" -}}
{{- end -}}
{{- if and .Values.model.namespaces (not .Values.model.file) -}}
{{- fail "model.namespaces needs model.file (--set-file model.file=MODEL.json)" -}}
{{- end -}}
{{- end -}}
