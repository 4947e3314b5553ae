{{- define "library.cm" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
{{- end -}}
