{{- /*
The nodes of the release: `nodes` (a list of {name, image, machineId}: the no-op plan's side of
P6, bench/fleet.ts), else the one node of `name`, `image`, `machineId` (the rollback benchmark).
*/ -}}
{{- define "bench.nodes" -}}
{{- if .Values.nodes -}}
{{- toJson .Values.nodes -}}
{{- else -}}
{{- toJson (list (dict "name" .Values.name "image" .Values.image "machineId" .Values.machineId)) -}}
{{- end -}}
{{- end -}}
