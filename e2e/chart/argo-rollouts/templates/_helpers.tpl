{{- define "stand-in.fullname" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- define "stand-in.selector" -}}
app.kubernetes.io/component: rollouts-controller
app.kubernetes.io/name: argo-rollouts
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "stand-in.labels" -}}
{{ include "stand-in.selector" . }}
helm.sh/chart: {{ .Chart.Name }}-{{ .Chart.Version }}
app.kubernetes.io/version: {{ regexReplaceAll "[^a-zA-Z0-9-_.]+" (regexReplaceAll "@sha256:[a-f0-9]+" (default .Chart.AppVersion .Values.controller.image.tag) "") "" | trunc 63 | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: argo-rollouts
{{- end -}}
{{- define "stand-in.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}{{ default (include "stand-in.fullname" .) .Values.serviceAccount.name }}{{- else -}}{{ default "default" .Values.serviceAccount.name }}{{- end -}}
{{- end -}}
