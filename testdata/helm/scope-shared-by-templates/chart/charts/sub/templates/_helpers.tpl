{{- define "sub.name" -}}sub{{- end -}}
