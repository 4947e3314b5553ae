{{- define "chain.inner" -}}
{{ .outer.missing.deeper }}
{{- end -}}
{{- define "chain.outer" -}}
name: {{ include "chain.inner" . }}
{{- end -}}
