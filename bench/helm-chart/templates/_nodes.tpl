{{- /*
The nodes of the release: `nodes` (a list of {name, image, machineId}: a group,
bench/lib/helm-values.ts), else the one node of `name`, `image`, `machineId` (the rollback benchmark).
*/ -}}
{{- define "bench.nodes" -}}
{{- if .Values.nodes -}}
{{- toJson .Values.nodes -}}
{{- else -}}
{{- toJson (list (dict "name" .Values.name "image" .Values.image "machineId" .Values.machineId)) -}}
{{- end -}}
{{- end -}}
