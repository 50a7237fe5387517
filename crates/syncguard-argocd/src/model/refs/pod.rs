//! References made by a pod spec: what must exist before the pod can start.
//!
//! These are the references behind the seed 000 incident (a PreSync Job waiting for a Secret the
//! Sync phase creates), so every place a pod spec can name a Secret, ConfigMap, PVC or
//! ServiceAccount is covered, in every container list.

use serde_json::Value;

use super::{Pointer, RefRole, Reference, array, is_optional, non_empty_str};

/// Container lists of a pod spec. Init and ephemeral containers need their references as much as
/// app containers do: an init container's missing Secret blocks the pod just the same.
const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

/// CSI driver of the Secrets Store CSI Driver, whose volumes name a SecretProviderClass
/// (spec §10-8: "failed to get secretproviderclass").
const SECRETS_STORE_DRIVER: &str = "secrets-store.csi.k8s.io";

/// API group of SecretProviderClass.
const SECRETS_STORE_GROUP: &str = "secrets-store.csi.x-k8s.io";

/// Collects the references of one pod spec.
///
/// `base` is the pointer to `spec` itself; `namespace` the owning object's namespace (pods only
/// see objects of their own namespace); `overridden_volumes` the volume names a StatefulSet's
/// claim templates replace, which therefore reference nothing.
pub(super) fn collect(
    spec: &Value,
    base: &Pointer,
    namespace: Option<&str>,
    overridden_volumes: &[&str],
    out: &mut Vec<Reference>,
) {
    let mut emit = |kind: &str, group: &str, name: &str, via: Pointer, optional, role| {
        out.push(Reference {
            kind: kind.to_string(),
            group: group.to_string(),
            name: name.to_string(),
            namespace: namespace.map(str::to_string),
            via: via.into_string(),
            optional,
            role,
            defines: None,
        });
    };

    for list in CONTAINER_LISTS {
        for (i, container) in array(spec.get(list)) {
            let at = base.key(list).index(i);
            for (j, env) in array(container.get("env")) {
                let Some(value_from) = env.get("valueFrom") else {
                    continue;
                };
                for (field, kind) in [("secretKeyRef", "Secret"), ("configMapKeyRef", "ConfigMap")]
                {
                    let Some(selector) = value_from.get(field) else {
                        continue;
                    };
                    if let Some(name) = non_empty_str(selector.get("name")) {
                        let via = at
                            .key("env")
                            .index(j)
                            .key("valueFrom")
                            .key(field)
                            .key("name");
                        emit(kind, "", name, via, is_optional(selector), RefRole::Env);
                    }
                }
            }
            for (j, source) in array(container.get("envFrom")) {
                for (field, kind) in [("secretRef", "Secret"), ("configMapRef", "ConfigMap")] {
                    let Some(selector) = source.get(field) else {
                        continue;
                    };
                    if let Some(name) = non_empty_str(selector.get("name")) {
                        let via = at.key("envFrom").index(j).key(field).key("name");
                        emit(kind, "", name, via, is_optional(selector), RefRole::EnvFrom);
                    }
                }
            }
        }
    }

    for (i, volume) in array(spec.get("volumes")) {
        if non_empty_str(volume.get("name")).is_some_and(|n| overridden_volumes.contains(&n)) {
            continue;
        }
        let at = base.key("volumes").index(i);
        if let Some(secret) = volume.get("secret")
            && let Some(name) = non_empty_str(secret.get("secretName"))
        {
            let via = at.key("secret").key("secretName");
            emit(
                "Secret",
                "",
                name,
                via,
                is_optional(secret),
                RefRole::Volume,
            );
        }
        if let Some(config_map) = volume.get("configMap")
            && let Some(name) = non_empty_str(config_map.get("name"))
        {
            let via = at.key("configMap").key("name");
            let optional = is_optional(config_map);
            emit("ConfigMap", "", name, via, optional, RefRole::Volume);
        }
        if let Some(claim) = volume.get("persistentVolumeClaim")
            && let Some(name) = non_empty_str(claim.get("claimName"))
        {
            // A PVC volume has no `optional`: the pod stays Pending until the claim exists.
            let via = at.key("persistentVolumeClaim").key("claimName");
            emit(
                "PersistentVolumeClaim",
                "",
                name,
                via,
                false,
                RefRole::Volume,
            );
        }
        if let Some(projected) = volume.get("projected") {
            for (j, source) in array(projected.get("sources")) {
                for (field, kind) in [("secret", "Secret"), ("configMap", "ConfigMap")] {
                    let Some(selector) = source.get(field) else {
                        continue;
                    };
                    if let Some(name) = non_empty_str(selector.get("name")) {
                        let via = at
                            .key("projected")
                            .key("sources")
                            .index(j)
                            .key(field)
                            .key("name");
                        emit(kind, "", name, via, is_optional(selector), RefRole::Volume);
                    }
                }
            }
        }
        if let Some(csi) = volume.get("csi") {
            if let Some(name) =
                non_empty_str(csi.get("nodePublishSecretRef").and_then(|s| s.get("name")))
            {
                let via = at.key("csi").key("nodePublishSecretRef").key("name");
                emit("Secret", "", name, via, false, RefRole::Volume);
            }
            let attributes = csi.get("volumeAttributes");
            if non_empty_str(csi.get("driver")) == Some(SECRETS_STORE_DRIVER)
                && let Some(name) =
                    non_empty_str(attributes.and_then(|a| a.get("secretProviderClass")))
            {
                let via = at
                    .key("csi")
                    .key("volumeAttributes")
                    .key("secretProviderClass");
                emit(
                    "SecretProviderClass",
                    SECRETS_STORE_GROUP,
                    name,
                    via,
                    false,
                    RefRole::Volume,
                );
            }
        }
    }

    for (i, pull_secret) in array(spec.get("imagePullSecrets")) {
        if let Some(name) = non_empty_str(pull_secret.get("name")) {
            // A missing pull secret does not stop the pod being created, but the image pull of
            // a private image fails; it is as required as any other reference.
            let via = base.key("imagePullSecrets").index(i).key("name");
            emit("Secret", "", name, via, false, RefRole::ImagePullSecret);
        }
    }

    // `serviceAccountName` wins over the deprecated `serviceAccount`, as in the API server.
    let service_account = ["serviceAccountName", "serviceAccount"]
        .into_iter()
        .find_map(|field| non_empty_str(spec.get(field)).map(|name| (field, name)));
    if let Some((field, name)) = service_account {
        let via = base.key(field);
        emit(
            "ServiceAccount",
            "",
            name,
            via,
            false,
            RefRole::ServiceAccount,
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fixtures::{find, obj, vias};
    use super::super::{RefRole, references};

    #[test]
    fn env_value_from_references_secrets_and_config_maps_with_their_optional_flag() {
        let r = obj("apps/v1", "Deployment", "web")
            .namespace("app")
            .template(json!({"containers": [{"name": "c", "env": [
                {"name": "PLAIN", "value": "x"},
                {"name": "A", "valueFrom": {"secretKeyRef": {"name": "db", "key": "pw"}}},
                {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cfg", "key": "k", "optional": true}}},
                {"name": "C", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
            ]}]}))
            .build();
        let refs = references(&r);
        let a = find(
            &refs,
            "/spec/template/spec/containers/0/env/1/valueFrom/secretKeyRef/name",
        );
        assert_eq!((a.kind.as_str(), a.name.as_str()), ("Secret", "db"));
        assert_eq!(a.namespace.as_deref(), Some("app"));
        assert!(!a.optional);
        assert_eq!(a.role, RefRole::Env);
        let b = find(
            &refs,
            "/spec/template/spec/containers/0/env/2/valueFrom/configMapKeyRef/name",
        );
        assert_eq!((b.kind.as_str(), b.name.as_str()), ("ConfigMap", "cfg"));
        assert!(b.optional);
        // Namespace + two env references; plain values and fieldRefs reference nothing.
        assert_eq!(refs.len(), 3);
    }

    #[test]
    fn env_from_references_secrets_and_config_maps() {
        let r = obj("apps/v1", "Deployment", "web")
            .template(json!({"containers": [{"name": "c", "envFrom": [
                {"configMapRef": {"name": "cfg"}},
                {"secretRef": {"name": "db", "optional": true}, "prefix": "DB_"}
            ]}]}))
            .build();
        let refs = references(&r);
        let cm = find(
            &refs,
            "/spec/template/spec/containers/0/envFrom/0/configMapRef/name",
        );
        assert_eq!((cm.kind.as_str(), cm.role), ("ConfigMap", RefRole::EnvFrom));
        let s = find(
            &refs,
            "/spec/template/spec/containers/0/envFrom/1/secretRef/name",
        );
        assert_eq!(s.kind, "Secret");
        assert!(s.optional);
    }

    #[test]
    fn init_and_ephemeral_containers_are_read_like_app_containers() {
        let c = |secret: &str| json!({"name": "c", "envFrom": [{"secretRef": {"name": secret}}]});
        let r = obj("apps/v1", "Deployment", "web")
            .template(json!({
                "containers": [c("app")],
                "initContainers": [c("x"), c("migrate")],
                "ephemeralContainers": [c("debug")]
            }))
            .build();
        let refs = references(&r);
        let names: Vec<_> = refs.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["app", "x", "migrate", "debug"]);
        find(
            &refs,
            "/spec/template/spec/initContainers/1/envFrom/0/secretRef/name",
        );
        find(
            &refs,
            "/spec/template/spec/ephemeralContainers/0/envFrom/0/secretRef/name",
        );
    }

    #[test]
    fn secret_config_map_and_pvc_volumes_are_references() {
        let r = obj("apps/v1", "Deployment", "web")
            .template(json!({"volumes": [
                {"name": "a", "secret": {"secretName": "tls", "optional": true}},
                {"name": "b", "configMap": {"name": "cfg"}},
                {"name": "c", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "d", "emptyDir": {}}
            ]}))
            .build();
        let refs = references(&r);
        assert_eq!(refs.len(), 3);
        let s = find(&refs, "/spec/template/spec/volumes/0/secret/secretName");
        assert_eq!(
            (s.kind.as_str(), s.name.as_str(), s.optional),
            ("Secret", "tls", true)
        );
        assert_eq!(s.role, RefRole::Volume);
        let cm = find(&refs, "/spec/template/spec/volumes/1/configMap/name");
        assert_eq!((cm.kind.as_str(), cm.optional), ("ConfigMap", false));
        let pvc = find(
            &refs,
            "/spec/template/spec/volumes/2/persistentVolumeClaim/claimName",
        );
        assert_eq!(
            (pvc.kind.as_str(), pvc.name.as_str()),
            ("PersistentVolumeClaim", "data")
        );
    }

    #[test]
    fn projected_volume_sources_reference_secrets_and_config_maps() {
        let r = obj("apps/v1", "Deployment", "web")
            .template(
                json!({"volumes": [{"name": "all", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token"}},
                    {"secret": {"name": "s", "optional": true}},
                    {"configMap": {"name": "c"}},
                    {"downwardAPI": {"items": []}}
                ]}}]}),
            )
            .build();
        let refs = references(&r);
        assert_eq!(refs.len(), 2);
        let s = find(
            &refs,
            "/spec/template/spec/volumes/0/projected/sources/1/secret/name",
        );
        assert_eq!((s.kind.as_str(), s.optional), ("Secret", true));
        let c = find(
            &refs,
            "/spec/template/spec/volumes/0/projected/sources/2/configMap/name",
        );
        assert_eq!((c.kind.as_str(), c.optional), ("ConfigMap", false));
    }

    #[test]
    fn secrets_store_csi_volumes_reference_their_secret_provider_class() {
        let r = obj("apps/v1", "Deployment", "web")
            .template(json!({"volumes": [{"name": "v", "csi": {
                "driver": "secrets-store.csi.k8s.io",
                "volumeAttributes": {"secretProviderClass": "vault-db"},
                "nodePublishSecretRef": {"name": "creds"}
            }}]}))
            .build();
        let refs = references(&r);
        let spc = find(
            &refs,
            "/spec/template/spec/volumes/0/csi/volumeAttributes/secretProviderClass",
        );
        assert_eq!(
            (spc.kind.as_str(), spc.group.as_str(), spc.name.as_str()),
            (
                "SecretProviderClass",
                "secrets-store.csi.x-k8s.io",
                "vault-db"
            )
        );
        let s = find(
            &refs,
            "/spec/template/spec/volumes/0/csi/nodePublishSecretRef/name",
        );
        assert_eq!(s.kind, "Secret");
    }

    #[test]
    fn image_pull_secrets_are_references() {
        let r = obj("apps/v1", "DaemonSet", "agent")
            .template(json!({"imagePullSecrets": [{"name": "a"}, {}, {"name": "b"}]}))
            .build();
        let refs = references(&r);
        assert_eq!(
            vias(&refs),
            [
                "/spec/template/spec/imagePullSecrets/0/name",
                "/spec/template/spec/imagePullSecrets/2/name"
            ]
        );
        assert!(refs.iter().all(|r| r.role == RefRole::ImagePullSecret));
    }

    #[test]
    fn service_account_name_is_a_reference_and_wins_over_the_deprecated_field() {
        let r = obj("batch/v1", "Job", "migrate")
            .template(json!({"serviceAccountName": "migrator", "serviceAccount": "old"}))
            .build();
        let refs = references(&r);
        assert_eq!(refs.len(), 1);
        let sa = find(&refs, "/spec/template/spec/serviceAccountName");
        assert_eq!(
            (sa.kind.as_str(), sa.name.as_str(), sa.role),
            ("ServiceAccount", "migrator", RefRole::ServiceAccount)
        );
    }

    #[test]
    fn the_deprecated_service_account_field_is_read_when_it_is_the_only_one() {
        let r = obj("batch/v1", "Job", "migrate")
            .template(json!({"serviceAccount": "old"}))
            .build();
        assert_eq!(
            find(&references(&r), "/spec/template/spec/serviceAccount").name,
            "old"
        );
    }

    #[test]
    fn the_implicit_default_service_account_is_not_a_reference_but_an_explicit_one_is() {
        let implicit = obj("v1", "Pod", "p")
            .set("/spec/containers", json!([]))
            .build();
        assert!(references(&implicit).is_empty());
        let explicit = obj("v1", "Pod", "p")
            .set("/spec/serviceAccountName", json!("default"))
            .build();
        assert_eq!(
            find(&references(&explicit), "/spec/serviceAccountName").name,
            "default"
        );
    }

    #[test]
    fn every_workload_kind_is_read_at_its_pod_spec_path() {
        let pod_spec = json!({"serviceAccountName": "sa"});
        let cases = [
            ("v1", "Pod", "/spec"),
            ("v1", "PodTemplate", "/template"),
            ("v1", "ReplicationController", "/spec/template"),
            ("apps/v1", "Deployment", "/spec/template"),
            ("apps/v1", "StatefulSet", "/spec/template"),
            ("apps/v1", "DaemonSet", "/spec/template"),
            ("apps/v1", "ReplicaSet", "/spec/template"),
            ("extensions/v1beta1", "Deployment", "/spec/template"),
            ("batch/v1", "Job", "/spec/template"),
            ("batch/v1", "CronJob", "/spec/jobTemplate/spec/template"),
            ("argoproj.io/v1alpha1", "Rollout", "/spec/template"),
            (
                "keda.sh/v1alpha1",
                "ScaledJob",
                "/spec/jobTargetRef/template",
            ),
        ];
        for (api_version, kind, parent) in cases {
            let spec_at = if kind == "Pod" {
                parent.to_string()
            } else {
                format!("{parent}/spec")
            };
            let r = obj(api_version, kind, "w")
                .set(&spec_at, pod_spec.clone())
                .build();
            let via = format!("{spec_at}/serviceAccountName");
            assert_eq!(find(&references(&r), &via).name, "sa", "{kind}");
        }
    }

    #[test]
    fn cron_job_references_are_read_from_the_job_template() {
        let r = obj("batch/v1", "CronJob", "nightly")
            .namespace("ops")
            .set(
                "/spec/jobTemplate/spec/template/spec",
                json!({"containers": [{"name": "c", "envFrom": [{"secretRef": {"name": "s3"}}]}]}),
            )
            .build();
        let s = find(
            &references(&r),
            "/spec/jobTemplate/spec/template/spec/containers/0/envFrom/0/secretRef/name",
        )
        .clone();
        assert_eq!(
            (s.name.as_str(), s.namespace.as_deref()),
            ("s3", Some("ops"))
        );
    }

    #[test]
    fn a_rollout_template_is_read_like_a_deployment_template() {
        let r = obj("argoproj.io/v1alpha1", "Rollout", "web")
            .template(json!({"volumes": [{"name": "c", "configMap": {"name": "web-cfg"}}]}))
            .build();
        let refs = references(&r);
        find(&refs, "/spec/template/spec/volumes/0/configMap/name");
        // argoproj.io is a CRD group: the Rollout needs its CRD too.
        assert!(refs.iter().any(|r| r.role == RefRole::Definition));
    }

    #[test]
    fn statefulset_volumes_replaced_by_claim_templates_are_not_pvc_references() {
        let r = obj("apps/v1", "StatefulSet", "db")
            .set(
                "/spec/volumeClaimTemplates",
                json!([{"metadata": {"name": "data"}, "spec": {}}]),
            )
            .template(json!({"volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "shared", "persistentVolumeClaim": {"claimName": "shared"}}
            ]}))
            .build();
        assert_eq!(
            vias(&references(&r)),
            ["/spec/template/spec/volumes/1/persistentVolumeClaim/claimName"]
        );
    }

    #[test]
    fn claim_templates_only_matter_for_statefulsets() {
        let r = obj("apps/v1", "Deployment", "web")
            .set(
                "/spec/volumeClaimTemplates",
                json!([{"metadata": {"name": "data"}}]),
            )
            .template(json!({"volumes": [
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}}
            ]}))
            .build();
        assert_eq!(references(&r).len(), 1);
    }

    #[test]
    fn kinds_without_a_pod_template_are_not_read_as_workloads() {
        let r = obj("v1", "ConfigMap", "c")
            .set("/spec/template/spec", json!({"serviceAccountName": "x"}))
            .build();
        assert!(references(&r).is_empty());
    }
}
