//! Which kinds a stock Argo CD assesses, and how: a built-in Go check, or one of the Lua checks
//! bundled in `resource_customizations/`.

use super::has_health_check;

/// Where a kind's health verdict comes from in a stock Argo CD controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HealthCheckSource {
    /// A built-in Go check (spec §8).
    Builtin,
    /// A Lua check bundled with Argo CD in `resource_customizations/` (users may override it).
    BundledLua,
}

/// Which health check a stock Argo CD applies to a kind, if any. `None` means the kind has no
/// health: it never holds up the next wave and completes at once as a hook (spec §5.3, H18).
///
/// The Lua list is the set of `<group>/<kind>/health.lua` files in argoproj/argo-cd
/// `resource_customizations/` at commit 37ee009 (2026-08-22); `_` is a wildcard there, as in
/// Argo CD (`_.crossplane.io/_` matches every kind of every `*.crossplane.io` group). A cluster's
/// `resource.customizations` can add or override checks; syncguard cannot see those.
pub fn health_check_source(group: &str, kind: &str) -> Option<HealthCheckSource> {
    if has_health_check(group, kind) {
        return Some(HealthCheckSource::Builtin);
    }
    let bundled = BundledIndex::get();
    let exact = bundled
        .exact
        .get(group)
        .is_some_and(|kinds| kinds.iter().any(|k| *k == "_" || *k == kind));
    let wildcard = || {
        bundled
            .suffixes
            .iter()
            .any(|(suffix, k)| group.ends_with(suffix) && (*k == "_" || *k == kind))
    };
    (exact || wildcard()).then_some(HealthCheckSource::BundledLua)
}

/// [`BUNDLED_LUA_HEALTH`] split once per process: exact groups to their kinds, and the
/// wildcard groups (`_.crossplane.io`) as (suffix, kind). The list is looked up for every
/// object of every review, so a scan of its 240 entries per call would show.
struct BundledIndex {
    exact: std::collections::HashMap<&'static str, Vec<&'static str>>,
    suffixes: Vec<(&'static str, &'static str)>,
}

impl BundledIndex {
    fn get() -> &'static Self {
        static INDEX: std::sync::OnceLock<BundledIndex> = std::sync::OnceLock::new();
        INDEX.get_or_init(|| {
            let mut index = BundledIndex {
                exact: std::collections::HashMap::new(),
                suffixes: Vec::new(),
            };
            for entry in BUNDLED_LUA_HEALTH {
                let Some((g, k)) = entry.rsplit_once('/') else {
                    continue;
                };
                // `_` is Argo CD's wildcard (`_.crossplane.io` is the glob `*.crossplane.io`).
                match g.strip_prefix('_') {
                    Some(suffix) => index.suffixes.push((suffix, k)),
                    None => index.exact.entry(g).or_default().push(k),
                }
            }
            index
        })
    }
}

/// `<group>/<kind>` of every bundled Lua health check (see [`health_check_source`]).
const BUNDLED_LUA_HEALTH: &[&str] = &[
    "_.cnrm.cloud.google.com/_",
    "_.crossplane.io/_",
    "_.services.k8s.aws/_",
    "_.upbound.io/_",
    "acid.zalan.do/postgresql",
    "addons.cluster.x-k8s.io/ClusterResourceSet",
    "apiextensions.k8s.io/CustomResourceDefinition",
    "apps.3scale.net/APIManager",
    "apps.kruise.io/AdvancedCronJob",
    "apps.kruise.io/BroadcastJob",
    "apps.kruise.io/CloneSet",
    "apps.kruise.io/DaemonSet",
    "apps.kruise.io/StatefulSet",
    "apps.openshift.io/DeploymentConfig",
    "argoproj.io/AnalysisRun",
    "argoproj.io/ApplicationSet",
    "argoproj.io/CronWorkflow",
    "argoproj.io/EventBus",
    "argoproj.io/Experiment",
    "argoproj.io/Rollout",
    "astra.netapp.io/AppVault",
    "astra.netapp.io/Application",
    "astra.netapp.io/Backup",
    "astra.netapp.io/ExecHook",
    "astra.netapp.io/ExecHooksRun",
    "astra.netapp.io/ResourceBackup",
    "astra.netapp.io/ResticVolumeBackup",
    "astra.netapp.io/Schedule",
    "astra.netapp.io/Snapshot",
    "batch/CronJob",
    "beat.k8s.elastic.co/Beat",
    "bitnami.com/SealedSecret",
    "camel.apache.org/Integration",
    "capabilities.3scale.net/ActiveDoc",
    "capabilities.3scale.net/Application",
    "capabilities.3scale.net/ApplicationAuth",
    "capabilities.3scale.net/Backend",
    "capabilities.3scale.net/CustomPolicyDefinition",
    "capabilities.3scale.net/DeveloperAccount",
    "capabilities.3scale.net/DeveloperUser",
    "capabilities.3scale.net/OpenAPI",
    "capabilities.3scale.net/Product",
    "capabilities.3scale.net/ProxyConfigPromote",
    "capabilities.3scale.net/Tenant",
    "cassandra.rook.io/Cluster",
    "cdi.kubevirt.io/DataVolume",
    "ceph.rook.io/CephCluster",
    "ceph.rook.io/CephObjectStore",
    "cert-manager.io/Certificate",
    "cert-manager.io/ClusterIssuer",
    "cert-manager.io/Issuer",
    "certmanager.k8s.io/Certificate",
    "certmanager.k8s.io/Issuer",
    "clickhouse-keeper.altinity.com/ClickHouseKeeperInstallation",
    "clickhouse.altinity.com/ClickHouseInstallation",
    "cloudfront.aws.crossplane.io/Distribution",
    "cluster.x-k8s.io/Cluster",
    "cluster.x-k8s.io/Machine",
    "cluster.x-k8s.io/MachineDeployment",
    "cluster.x-k8s.io/MachineHealthCheck",
    "cluster.x-k8s.io/MachinePool",
    "controlplane.cluster.x-k8s.io/AWSManagedControlPlane",
    "coralogix.com/Alert",
    "coralogix.com/RecordingRuleGroupSet",
    "core.gardener.cloud/Shoot",
    "core.humio.com/HumioAction",
    "core.humio.com/HumioAlert",
    "core.humio.com/HumioCluster",
    "core.humio.com/HumioIngestToken",
    "core.humio.com/HumioParser",
    "core.humio.com/HumioRepository",
    "core.humio.com/HumioView",
    "core.spinkube.dev/SpinApp",
    "datadoghq.com/DatadogMetric",
    "db.atlasgo.io/AtlasMigration",
    "db.atlasgo.io/AtlasSchema",
    "elasticsearch.k8s.elastic.co/Elasticsearch",
    "external-secrets.io/ClusterExternalSecret",
    "external-secrets.io/ClusterSecretStore",
    "external-secrets.io/ExternalSecret",
    "external-secrets.io/PushSecret",
    "external-secrets.io/SecretStore",
    "flagger.app/Canary",
    "flink.apache.org/FlinkDeployment",
    "game.kruise.io/GameServer",
    "game.kruise.io/GameServerSet",
    "gateway.networking.k8s.io/BackendTLSPolicy",
    "gateway.networking.k8s.io/GRPCRoute",
    "gateway.networking.k8s.io/Gateway",
    "gateway.networking.k8s.io/GatewayClass",
    "gateway.networking.k8s.io/HTTPRoute",
    "gateway.solo.io/Gateway",
    "gateway.solo.io/MatchableHttpGateway",
    "gateway.solo.io/RouteOption",
    "gateway.solo.io/RouteTable",
    "gateway.solo.io/VirtualHostOption",
    "gateway.solo.io/VirtualService",
    "gloo.solo.io/Proxy",
    "gloo.solo.io/Settings",
    "gloo.solo.io/Upstream",
    "gloo.solo.io/UpstreamGroup",
    "grafana-org-operator.kubitus-project.gitlab.io/_",
    "grafana.integreatly.org/Grafana",
    "grafana.integreatly.org/GrafanaDashboard",
    "grafana.integreatly.org/GrafanaDatasource",
    "grafana.integreatly.org/GrafanaFolder",
    "helm.toolkit.fluxcd.io/HelmRelease",
    "iam.aws.crossplane.io/Policy",
    "iam.aws.crossplane.io/Role",
    "iam.aws.crossplane.io/RolePolicyAttachment",
    "iammanager.keikoproj.io/Iamrole",
    "image.toolkit.fluxcd.io/ImagePolicy",
    "image.toolkit.fluxcd.io/ImageRepository",
    "image.toolkit.fluxcd.io/ImageUpdateAutomation",
    "install.istio.io/IstioOperator",
    "jaegertracing.io/Jaeger",
    "k8s.keycloak.org/Keycloak",
    "k8s.mariadb.com/Backup",
    "k8s.mariadb.com/Database",
    "k8s.mariadb.com/Grant",
    "k8s.mariadb.com/MariaDB",
    "k8s.mariadb.com/SqlJob",
    "k8s.mariadb.com/User",
    "kafka.banzaicloud.io/KafkaCluster",
    "kafka.strimzi.io/Kafka",
    "kafka.strimzi.io/KafkaBridge",
    "kafka.strimzi.io/KafkaConnect",
    "kafka.strimzi.io/KafkaConnector",
    "kafka.strimzi.io/KafkaTopic",
    "kafka.strimzi.io/KafkaUser",
    "karpenter.k8s.aws/EC2NodeClass",
    "karpenter.sh/NodeClaim",
    "karpenter.sh/NodePool",
    "keda.sh/ScaledJob",
    "keda.sh/ScaledObject",
    "kiali.io/Kiali",
    "kubernetes-client.io/ExternalSecret",
    "kubevirt.io/VirtualMachine",
    "kubevirt.io/VirtualMachineInstance",
    "kustomize.toolkit.fluxcd.io/Kustomization",
    "kyverno.io/Policy",
    "lifecycle.keptn.sh/KeptnAppVersion",
    "lifecycle.keptn.sh/KeptnEvaluation",
    "lifecycle.keptn.sh/KeptnTask",
    "lifecycle.keptn.sh/KeptnWorkloadInstance",
    "lifecycle.keptn.sh/KeptnWorkloadVersion",
    "logstash.k8s.elastic.co/Logstash",
    "mariadb.mmontes.io/MariaDB",
    "metrics.keptn.sh/Analysis",
    "metrics.keptn.sh/KeptnMetric",
    "microgateway.airlock.com/_",
    "minio.min.io/Tenant",
    "monitoring.coreos.com/Prometheus",
    "networking.gke.io/ManagedCertificate",
    "nmstate.io/NodeNetworkConfigurationPolicy",
    "notification.toolkit.fluxcd.io/Receiver",
    "numaflow.numaproj.io/InterStepBufferService",
    "numaflow.numaproj.io/MonoVertex",
    "numaflow.numaproj.io/Pipeline",
    "numaflow.numaproj.io/Vertex",
    "numaplane.numaproj.io/ISBServiceRollout",
    "numaplane.numaproj.io/MonoVertexRollout",
    "numaplane.numaproj.io/NumaflowControllerRollout",
    "numaplane.numaproj.io/PipelineRollout",
    "objectbucket.io/ObjectBucketClaim",
    "ocs.openshift.io/StorageCluster",
    "onepassword.com/OnePasswordItem",
    "openfaas.com/Function",
    "opentelemetry.io/OpenTelemetryCollector",
    "operator.knative.dev/KnativeEventing",
    "operator.knative.dev/KnativeServing",
    "operator.openshift.io/IngressController",
    "operator.victoriametrics.com/_",
    "operators.coreos.com/Subscription",
    "pkg.crossplane.io/Provider",
    "platform.confluent.io/Connect",
    "platform.confluent.io/Connector",
    "platform.confluent.io/ControlCenter",
    "platform.confluent.io/Kafka",
    "platform.confluent.io/KsqlDB",
    "platform.confluent.io/SchemaRegistry",
    "platform.confluent.io/Zookeeper",
    "policy.open-cluster-management.io/CertificatePolicy",
    "policy.open-cluster-management.io/ConfigurationPolicy",
    "policy.open-cluster-management.io/OperatorPolicy",
    "policy.open-cluster-management.io/Policy",
    "policy/PodDisruptionBudget",
    "postgresql.cnpg.io/Cluster",
    "proclaim.dogmatiq.io/DNSSDServiceInstance",
    "projectcontour.io/ExtensionService",
    "projectcontour.io/HTTPProxy",
    "promoter.argoproj.io/ArgoCDCommitStatus",
    "promoter.argoproj.io/ChangeTransferPolicy",
    "promoter.argoproj.io/ClusterScmProvider",
    "promoter.argoproj.io/CommitStatus",
    "promoter.argoproj.io/GitCommitStatus",
    "promoter.argoproj.io/GitRepository",
    "promoter.argoproj.io/PromotionStrategy",
    "promoter.argoproj.io/PullRequest",
    "promoter.argoproj.io/ScmProvider",
    "promoter.argoproj.io/TimedCommitStatus",
    "promoter.argoproj.io/WebRequestCommitStatus",
    "psmdb.percona.com/PerconaServerMongoDB",
    "pulumi.com/Stack",
    "pxc.percona.com/PerconaXtraDBCluster",
    "rabbitmq.com/Binding",
    "rabbitmq.com/Exchange",
    "rabbitmq.com/Permission",
    "rabbitmq.com/Policy",
    "rabbitmq.com/Queue",
    "rabbitmq.com/RabbitmqCluster",
    "rabbitmq.com/Shovel",
    "rabbitmq.com/User",
    "rabbitmq.com/Vhost",
    "rds.aws.crossplane.io/DBCluster",
    "rds.aws.crossplane.io/DBInstance",
    "rollouts.kruise.io/Rollout",
    "route.openshift.io/Route",
    "route53.aws.crossplane.io/ResourceRecordSet",
    "s3.aws.crossplane.io/Bucket",
    "services.cloud.sap.com/ServiceBinding",
    "services.cloud.sap.com/ServiceInstance",
    "serving.knative.dev/Service",
    "serving.kserve.io/InferenceService",
    "snapshot.storage.k8s.io/VolumeSnapshot",
    "snapshot.storage.k8s.io/VolumeSnapshotContent",
    "solr.apache.org/SolrCloud",
    "source.toolkit.fluxcd.io/Bucket",
    "source.toolkit.fluxcd.io/GitRepository",
    "source.toolkit.fluxcd.io/HelmChart",
    "source.toolkit.fluxcd.io/HelmRepository",
    "source.toolkit.fluxcd.io/OCIRepository",
    "sparkoperator.k8s.io/SparkApplication",
    "spot.io/SpotDeployment",
    "stacks.crossplane.io/ClusterStackInstall",
    "tower.ansible.com/AnsibleJob",
    "trident.netapp.io/TridentBackendConfig",
    "trident.netapp.io/TridentOrchestrator",
    "work.karmada.io/ClusterResourceBinding",
    "work.karmada.io/ResourceBinding",
    "zookeeper.pravega.io/ZookeeperCluster",
];

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod health_check_source_tests {
    use super::*;

    #[test]
    fn bundled_lua_checks_gate_waves_like_builtin_ones() {
        assert_eq!(
            health_check_source("apps", "Deployment"),
            Some(HealthCheckSource::Builtin)
        );
        assert_eq!(
            health_check_source("external-secrets.io", "ExternalSecret"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(
            health_check_source("batch", "CronJob"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(
            health_check_source("s3.aws.crossplane.io", "Bucket"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(
            health_check_source("pkg.crossplane.io", "Anything"),
            Some(HealthCheckSource::BundledLua)
        );
        assert_eq!(health_check_source("notcrossplane.io", "Bucket"), None);
        assert_eq!(health_check_source("argoproj.io", "Application"), None);
        assert_eq!(health_check_source("", "ConfigMap"), None);
        assert_eq!(health_check_source("example.com", "Widget"), None);
    }

    /// The index answers as a scan of the list does, for every listed pair and near misses.
    #[test]
    fn the_index_agrees_with_a_scan_of_the_list() {
        let scan = |group: &str, kind: &str| {
            BUNDLED_LUA_HEALTH.iter().any(|entry| {
                let (g, k) = entry.rsplit_once('/').unwrap();
                let group_ok = match g.strip_prefix('_') {
                    Some(suffix) => group.ends_with(suffix),
                    None => g == group,
                };
                group_ok && (k == "_" || k == kind)
            })
        };
        let mut probes = 0;
        for entry in BUNDLED_LUA_HEALTH {
            let (g, k) = entry.rsplit_once('/').unwrap();
            let groups = [
                g.replace('_', "x"),
                g.trim_start_matches("_.").to_string(),
                format!("a{g}"),
                g.to_string(),
            ];
            for group in &groups {
                for kind in [k, "Other", ""] {
                    if has_health_check(group, kind) {
                        continue;
                    }
                    let indexed = health_check_source(group, kind).is_some();
                    assert_eq!(indexed, scan(group, kind), "{group}/{kind}");
                    probes += 1;
                }
            }
        }
        assert!(probes > 2 * BUNDLED_LUA_HEALTH.len());
    }
}
