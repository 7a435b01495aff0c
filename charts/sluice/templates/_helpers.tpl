{{/* The manager's image: by digest when pinned, else by tag. */}}
{{- define "sluice.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end }}

{{- define "sluice.labels" -}}
app.kubernetes.io/name: sluice
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* The manager's pods: the label the generated Services and policies select. */}}
{{- define "sluice.selectorLabels" -}}
control-plane: controller-manager
{{- end }}

{{/* The manager's configuration, with the release's namespace. */}}
{{- define "sluice.managerConfig" -}}
{{- $cfg := deepCopy .Values.managerConfig -}}
{{- $_ := set $cfg "apiVersion" "config.kueue.x-k8s.io/v1beta2" -}}
{{- $_ := set $cfg "kind" "Configuration" -}}
{{- $_ := set $cfg "namespace" .Release.Namespace -}}
{{- if .Values.certManager.enable -}}
{{- $icm := deepCopy (default dict $cfg.internalCertManagement) -}}
{{- $_ := set $icm "enable" false -}}
{{- $_ := set $cfg "internalCertManagement" $icm -}}
{{- end -}}
{{ toYaml $cfg }}
{{- end }}

{{/* The webhook Secret's name, which the configuration may change. */}}
{{- define "sluice.webhookSecretName" -}}
{{- $icm := default dict .Values.managerConfig.internalCertManagement -}}
{{- $icm.webhookSecretName | default "sluice-webhook-server-cert" -}}
{{- end }}

{{- define "sluice.webhookServiceName" -}}
{{- $icm := default dict .Values.managerConfig.internalCertManagement -}}
{{- $icm.webhookServiceName | default "sluice-webhook-service" -}}
{{- end }}
