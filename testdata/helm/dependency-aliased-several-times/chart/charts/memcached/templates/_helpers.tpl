{{- define "memcached.fullname" -}}
{{ .Release.Name }}-{{ .Chart.Name }}
{{- end -}}
