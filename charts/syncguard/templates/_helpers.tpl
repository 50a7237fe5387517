{{/*
Helpers. Nothing here may depend on time, randomness or the live cluster (no now, rand*, genCA,
lookup): Argo CD renders the chart on every refresh and compares the result with the cluster.
*/}}

{{- define "syncguard.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "syncguard.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "syncguard.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "syncguard.labels" -}}
helm.sh/chart: {{ include "syncguard.chart" . }}
app.kubernetes.io/name: {{ include "syncguard.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: syncguard
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "ctx" $ "component" "webhook"). */}}
{{- define "syncguard.selectorLabels" -}}
app.kubernetes.io/name: {{ include "syncguard.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "syncguard.componentLabels" -}}
{{ include "syncguard.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "syncguard.webhook.name" -}}
{{- printf "%s-webhook" (include "syncguard.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "syncguard.reconciler.name" -}}
{{- printf "%s-reconciler" (include "syncguard.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* The Service the API server calls; the serving certificate must be valid for its DNS names. */}}
{{- define "syncguard.service.name" -}}
{{- include "syncguard.fullname" . -}}
{{- end -}}

{{- define "syncguard.policies.name" -}}
{{- printf "%s-policies" (include "syncguard.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "syncguard.tls.secretName" -}}
{{- default (printf "%s-tls" (include "syncguard.fullname" .)) .Values.certs.secretName -}}
{{- end -}}

{{- define "syncguard.leaseName" -}}
{{- default (include "syncguard.reconciler.name" .) .Values.reconciler.leaseName -}}
{{- end -}}

{{- define "syncguard.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if eq $tag "latest" -}}
{{- fail "image.tag: \"latest\" is not allowed; pin a version (default: the chart's appVersion)" -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{/* The Certificate whose CA cert-manager's cainjector copies into caBundle. */}}
{{- define "syncguard.certificate.name" -}}
{{- printf "%s-serving" (include "syncguard.fullname" .) | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
clientConfig + the TLS part of one webhook entry. caBundle is only rendered in existingSecret
mode; with cert-manager the cainjector owns it (Argo CD must ignore that field, see README.md).
Call with (dict "ctx" $ "path" "/validate").
*/}}
{{- define "syncguard.clientConfig" -}}
clientConfig:
  service:
    name: {{ include "syncguard.service.name" .ctx }}
    namespace: {{ .ctx.Release.Namespace }}
    path: {{ .path }}
    port: 443
  {{- if and (not .ctx.Values.certManager.enabled) .ctx.Values.certs.caCert }}
  caBundle: {{ .ctx.Values.certs.caCert | b64enc }}
  {{- end }}
{{- end -}}

{{/* Namespaces the webhooks skip: kube-system, the release namespace, and webhook.excludeNamespaces. */}}
{{- define "syncguard.namespaceSelector" -}}
{{- $ns := list "kube-system" .Release.Namespace -}}
{{- range .Values.webhook.excludeNamespaces -}}
{{- $ns = append $ns . -}}
{{- end -}}
namespaceSelector:
  matchExpressions:
    - key: kubernetes.io/metadata.name
      operator: NotIn
      values:
        {{- range ($ns | uniq) }}
        - {{ . | quote }}
        {{- end }}
{{- with .Values.webhook.objectSelector }}
objectSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
The sync wave registers the webhooks only after the webhook Deployment is Healthy (Argo CD waits
for wave 0): with failurePolicy Fail there is no window in which the API server calls a webhook
that is not serving yet, and on deletion Argo CD prunes the configurations first.
*/}}
{{- define "syncguard.webhookAnnotations" -}}
annotations:
  argocd.argoproj.io/sync-wave: "1"
  {{- if .Values.certManager.enabled }}
  cert-manager.io/inject-ca-from: {{ printf "%s/%s" .Release.Namespace (include "syncguard.certificate.name" .) }}
  {{- end }}
{{- end -}}

{{/*
Checks that need more than the schema: the review deadline must fit inside the webhook timeout.
*/}}
{{- define "syncguard.validate" -}}
{{- $w := .Values.webhook -}}
{{- $min := 0 -}}
{{- range $hook := list $w.validating $w.mutating -}}
{{- if $hook.enabled -}}
{{- $t := $hook.timeoutSeconds | int -}}
{{- if or (eq $min 0) (lt $t $min) }}{{ $min = $t }}{{ end -}}
{{- end -}}
{{- end -}}
{{- if and (gt $min 0) (ge ($w.evalTimeoutMs | int) (mul $min 1000)) -}}
{{- fail (printf "webhook.evalTimeoutMs (%d) must be below the smallest webhook timeoutSeconds (%d s): otherwise the API server gives up before syncguard answers" ($w.evalTimeoutMs | int) $min) -}}
{{- end -}}
{{- if and (not .Values.certManager.enabled) (ne .Values.certs.mode "existingSecret") -}}
{{- fail "certs.mode must be existingSecret (or set certManager.enabled=true)" -}}
{{- end -}}
{{- end -}}

{{/* Pod-level settings shared by both Deployments: call with (dict "ctx" $ "c" .Values.webhook "component" "webhook"). */}}
{{- define "syncguard.podCommon" -}}
{{- with .ctx.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .ctx.Values.podSecurityContext | nindent 2 }}
terminationGracePeriodSeconds: {{ .c.terminationGracePeriodSeconds }}
{{- with .c.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- with .c.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .c.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml . | nindent 2 }}
{{- end }}
affinity:
{{- if .c.affinity }}
  {{- toYaml .c.affinity | nindent 2 }}
{{- else }}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "syncguard.selectorLabels" (dict "ctx" .ctx "component" .component) | nindent 14 }}
{{- end }}
{{- end -}}

{{/*
Annotations of the cert-manager objects. The sync wave puts them before the Deployments (Argo CD
waits for Issuers and Certificates to be Ready). The exemption is for syncguard's own SG203
(custom resource without its CRD in the Application): cert-manager is a prerequisite of
certManager.enabled, installed (CRDs included) before this chart, which is the case the rule's
message says to exempt.
*/}}
{{- define "syncguard.certManagerAnnotations" -}}
argocd.argoproj.io/sync-wave: {{ .Values.certManager.syncWave | quote }}
syncguard.dev/skip: SG203,SG206
syncguard.dev/skip-reason: cert-manager, its CRDs and its controller are a prerequisite of certManager.enabled and are installed before this chart
{{- end -}}

{{- /*
The overlay files (policies.config as config.yaml, policies.extraFiles) split into parts small
enough that each ConfigMap fits kubectl's last-applied annotation under Argo CD's client-side
apply (256 KiB; each part stays under 150 kB of text). Returns JSON: {"0": {name: body}, "1": ...};
always at least part "0" (empty when nothing is set: the overlay is then the built-in set).
Both Deployments mount all parts into one directory through a projected volume.
*/}}
{{- define "syncguard.policies.parts" -}}
{{- $files := dict -}}
{{- with .Values.policies.config -}}
{{- $_ := set $files "config.yaml" (toYaml .) -}}
{{- end -}}
{{- range $name, $body := .Values.policies.extraFiles -}}
{{- if not (hasSuffix ".rego" $name) -}}
{{- fail (printf "policies.extraFiles.%s: only *.rego files are read (the configuration goes in policies.config)" $name) -}}
{{- end -}}
{{- $_ := set $files $name $body -}}
{{- end -}}
{{- $state := dict "part" 0 "size" 0 -}}
{{- $parts := dict "0" (dict) -}}
{{- range $name := keys $files | sortAlpha -}}
{{- $body := index $files $name -}}
{{- if and (gt (add (get $state "size") (len $body)) 150000) (gt (int (get $state "size")) 0) -}}
{{- $_ := set $state "part" (add1 (get $state "part")) -}}
{{- $_ := set $state "size" 0 -}}
{{- end -}}
{{- $key := printf "%d" (int (get $state "part")) -}}
{{- if not (hasKey $parts $key) -}}
{{- $_ := set $parts $key (dict) -}}
{{- end -}}
{{- $_ := set (get $parts $key) $name $body -}}
{{- $_ := set $state "size" (add (get $state "size") (len $body)) -}}
{{- end -}}
{{- toJson $parts -}}
{{- end -}}

{{- /* The projected volume of every policy part. */}}
{{- define "syncguard.policies.volume" -}}
- name: policies
  projected:
    sources:
      {{- range $key := keys (include "syncguard.policies.parts" . | fromJson) | sortAlpha }}
      - configMap:
          name: {{ include "syncguard.policies.name" $ }}-{{ $key }}
      {{- end }}
{{- end -}}

