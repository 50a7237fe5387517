//! Argo CD's two settings ConfigMaps as typed values: `argocd-cm` ([`ArgoCdSettings`]) and
//! `argocd-cmd-params-cm` ([`CmdParams`]), each read once from the ConfigMap's `data` map.
//!
//! Reading is tolerant and complete. Every key is classified ([`KeyClass`]): read (a typed field
//! holds it), kept (a key Argo CD reads that no rule judges yet) or unknown. A key Argo CD never
//! reads, or reads and cannot use, becomes a [`KeyNote`] with its JSON pointer
//! (`/data/<escaped key>`, so a finding carries the key's file and line), what is wrong with it
//! ([`KeyIssue`]) and, where there is one, the key meant: a cmd-params key written in argocd-cm or
//! the reverse, a key of another release's format, a misspelt customization type, a
//! `_Kind` health key for a core kind.
//!
//! The values of argocd-cm that are YAML text (`resource.customizations`, the split
//! customization keys, `resource.exclusions`, `resource.inclusions`, `resource.compareoptions`)
//! are parsed by the caller's parser ([`YamlParser`]): this crate has no YAML parser.
//!
//! - [`customizations`]: `resource.customizations.<type>.<group_Kind>` and the old block, keyed
//!   the way Argo CD keys its resource overrides.
//! - [`filter`]: `resource.exclusions` / `resource.inclusions` and Argo CD's filter semantics.
//! - [`argocd_cm`]: the whole of argocd-cm.
//! - [`cmd_params`]: the whole of argocd-cmd-params-cm.
//! - [`keys`]: which keys belong to which ConfigMap, and the key meant for a wrong one.

pub mod argocd_cm;
pub mod cmd_params;
pub mod customizations;
pub mod filter;
pub mod keys;

use serde::Serialize;
use serde_json::Value;

pub use argocd_cm::{ArgoCdSettings, CompareOptions, StatusField};
pub use cmd_params::{AppSetPolicy, CmdParams};
pub use customizations::{Customization, CustomizationType};
pub use filter::{Exclusion, ResourceFilter, ResourceFilters};

/// The name of Argo CD's main settings ConfigMap.
pub const ARGOCD_CM: &str = "argocd-cm";
/// The name of the ConfigMap of the components' flags.
pub const ARGOCD_CMD_PARAMS_CM: &str = "argocd-cmd-params-cm";

/// Parses one YAML text value into JSON (the caller's parser; errors are one line).
pub type YamlParser<'p> = &'p dyn Fn(&str) -> Result<Value, String>;

/// How a key of a settings ConfigMap was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyClass {
    /// Known, and read into a typed field.
    Read,
    /// Known to Argo CD, kept as written; no rule judges it.
    Kept,
    /// Not a key Argo CD reads from this ConfigMap (see the key's [`KeyNote`]).
    Unknown,
}

/// What is wrong with a key or its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyIssue {
    /// Argo CD reads this key from the other settings ConfigMap, never from this one.
    Misplaced,
    /// The key's format is another release's (or the old `resource.customizations` block's).
    OtherRelease,
    /// A misspelling of a key or customization type Argo CD reads.
    Misspelt,
    /// Read, but under a name Argo CD never matches an object with (`_PersistentVolumeClaim`).
    NeverMatched,
    /// Not a key Argo CD reads, and nothing close to one.
    Unknown,
    /// A value Argo CD does not understand: it uses its default instead.
    Malformed,
    /// A key or value Argo CD fails on: every resource customization fails to load (argocd-cm),
    /// or the component does not start (cmd-params).
    Breaks,
}

/// One key of a settings ConfigMap that does not do what it is written for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KeyNote {
    /// The key as written.
    pub key: String,
    /// Its JSON pointer in the ConfigMap (`/data/<escaped key>`).
    pub pointer: String,
    /// What is wrong.
    pub issue: KeyIssue,
    /// The key meant, when there is a likely one (with its ConfigMap when it is the other one).
    pub meant: Option<String>,
    /// One sentence: what Argo CD does with it.
    pub detail: String,
    /// The first release that no longer reads it, as `major * 100 + minor` (3.0 is 300); `None`
    /// when no release reads it.
    pub removed_in: Option<u32>,
}

impl KeyNote {
    pub(crate) fn new(key: &str, issue: KeyIssue, meant: Option<String>, detail: String) -> Self {
        KeyNote {
            key: key.to_string(),
            pointer: data_pointer(key),
            issue,
            meant,
            detail,
            removed_in: None,
        }
    }
}

/// `/data/<key>`, escaped as a JSON pointer token.
pub fn data_pointer(key: &str) -> String {
    let mut p = String::from("/data/");
    crate::pointers::push_escaped(&mut p, key);
    p
}

/// Go's `strconv.ParseBool`.
pub fn go_bool(text: &str) -> Option<bool> {
    match text {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// Argo CD's `env.ParseBoolFromEnv`: `true`/`false` in any case; anything else is the default.
pub fn env_bool(text: &str) -> Option<bool> {
    if text.eq_ignore_ascii_case("true") {
        Some(true)
    } else if text.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

/// The string values of a ConfigMap's `data`, with the pointer of each key; values that are not
/// strings (the API server refuses them) are returned apart.
pub(crate) fn string_data(data: Option<&Value>) -> (Vec<(&str, &str)>, Vec<&str>) {
    let mut strings = Vec::new();
    let mut others = Vec::new();
    if let Some(map) = data.and_then(Value::as_object) {
        for (k, v) in map {
            match v.as_str() {
                Some(s) => strings.push((k.as_str(), s)),
                None if v.is_null() => {}
                None => others.push(k.as_str()),
            }
        }
    }
    (strings, others)
}

/// Levenshtein distance, for "the key meant".
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = if ca == *cb {
                prev
            } else {
                1 + prev.min(cur).min(row[j])
            };
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate closest to `written`: the same ignoring case, else at most `max` edits away.
pub(crate) fn closest<'c>(
    written: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    max: usize,
) -> Option<&'c str> {
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        if c == written {
            continue;
        }
        let d = if c.eq_ignore_ascii_case(written) {
            0
        } else {
            edit_distance(&written.to_ascii_lowercase(), &c.to_ascii_lowercase())
        };
        if d <= max && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bools_parse_as_go_and_as_argo_cd_env_does() {
        assert_eq!(go_bool("True"), Some(true));
        assert_eq!(go_bool("yes"), None);
        assert_eq!(env_bool("TRUE"), Some(true));
        assert_eq!(env_bool("1"), None);
    }

    #[test]
    fn the_closest_key_is_case_blind_and_bounded() {
        let keys = ["health", "actions", "ignoreDifferences"];
        assert_eq!(closest("Health", keys, 2), Some("health"));
        assert_eq!(
            closest("ignoredifference", keys, 2),
            Some("ignoreDifferences")
        );
        assert_eq!(closest("lua", keys, 2), None);
        assert_eq!(data_pointer("a/b~c"), "/data/a~1b~0c");
    }
}

#[cfg(test)]
mod documented_keys {
    use serde_json::{Map, Value};

    /// Every key of Argo CD's example argocd-cm (docs/operator-manual/argocd-cm.yaml).
    const ARGOCD_CM: &str = "accounts.alice accounts.alice.enabled additionalUrls admin.enabled application.allowedNodeLabels application.instanceLabelKey application.links application.resourceTrackingMethod application.sync.impersonation.enabled application.sync.impersonation.enforced application.sync.requireOverridePrivilegeForRevisionSync cluster.inClusterEnabled commit.author.email commit.author.name dex.auth.connectorId dex.config exec.enabled exec.shells extension.config ga.anonymizeusers ga.trackingid helm.enable helm.valuesFileSchemes help.chatText help.chatUrl help.download.darwin-amd64 help.download.darwin-arm64 help.download.linux-amd64 help.download.linux-arm64 help.download.linux-ppc64le help.download.linux-s390x help.download.windows-amd64 installationID jsonnet.enable kustomize.buildOptions kustomize.buildOptions.v3.9.1 kustomize.enable kustomize.path.v3.9.1 kustomize.version.v3.5.1 kustomize.version.v3.5.4 oidc.config oidc.tls.insecure.skip.verify passwordPattern project.links resource.compareoptions resource.customLabels resource.customizations.actions.apps_Deployment resource.customizations.health.cert-manager.io_Certificate resource.customizations.health.certmanager.k8s.io_Certificate resource.customizations.ignoreDifferences.admissionregistration.k8s.io_MutatingWebhookConfiguration resource.customizations.ignoreDifferences.all resource.customizations.ignoreResourceUpdates.all resource.customizations.ignoreResourceUpdates.argoproj.io_Application resource.customizations.ignoreResourceUpdates.autoscaling_HorizontalPodAutoscaler resource.excludeEventLabelKeys resource.exclusions resource.ignoreResourceUpdatesEnabled resource.includeEventLabelKeys resource.inclusions resource.links resource.respectRBAC resource.sensitive.mask.annotations server.maxPodLogsToRender server.rbac.rollback.enforce.enable sourceHydrator.commitMessageTemplate sourceHydrator.readmeMessageTemplate statusbadge.enabled statusbadge.url timeout.reconciliation timeout.reconciliation.jitter ui.bannercontent ui.bannerpermanent ui.bannerposition ui.bannerurl ui.cssurl ui.loginButtonText ui.view.resources.disabled url users.anonymous.enabled users.session.duration webhook.maxPayloadSizeMB webhook.refresh.jitter webhook.refresh.jitter.threshold ";
    /// Every key of its example argocd-cmd-params-cm.
    const CMD_PARAMS: &str = "application.namespaces applicationsetcontroller.allowed.scm.providers applicationsetcontroller.concurrent.reconciliations.max applicationsetcontroller.debug applicationsetcontroller.dryrun applicationsetcontroller.enable.git.submodule applicationsetcontroller.enable.github.api.metrics applicationsetcontroller.enable.leader.election applicationsetcontroller.enable.new.git.file.globbing applicationsetcontroller.enable.policy.override applicationsetcontroller.enable.progressive.syncs applicationsetcontroller.enable.scm.providers applicationsetcontroller.enable.tokenref.strict.mode applicationsetcontroller.global.preserved.annotations applicationsetcontroller.global.preserved.labels applicationsetcontroller.grpc.enable.txt.service.config applicationsetcontroller.k8s.client.burst applicationsetcontroller.k8s.client.max.idle.connections applicationsetcontroller.k8s.client.qps applicationsetcontroller.k8s.tcp.idle.timeout applicationsetcontroller.k8s.tcp.keepalive applicationsetcontroller.k8s.tcp.timeout applicationsetcontroller.k8s.tls.handshake.timeout applicationsetcontroller.log.format applicationsetcontroller.log.level applicationsetcontroller.namespaces applicationsetcontroller.policy applicationsetcontroller.profile.enabled applicationsetcontroller.repo.server.ca.cert.path applicationsetcontroller.repo.server.client.cert.key.path applicationsetcontroller.repo.server.client.cert.path applicationsetcontroller.requeue.after applicationsetcontroller.scm.root.ca.path applicationsetcontroller.status.max.resources.count applicationsetcontroller.webhook.parallelism.limit commit.server commitserver.grpc.enable.txt.service.config commitserver.listen.address commitserver.log.format commitserver.log.level commitserver.metrics.listen.address controller.app.state.cache.expiration controller.cluster.cache.batch.events.processing controller.cluster.cache.events.processing.interval controller.default.cache.expiration controller.diff.server.side controller.grpc.enable.txt.service.config controller.hydration.processors controller.k8s.client.burst controller.k8s.client.max.idle.connections controller.k8s.client.qps controller.k8s.tcp.idle.timeout controller.k8s.tcp.keepalive controller.k8s.tcp.timeout controller.k8s.tls.handshake.timeout controller.k8sclient.retry.base.backoff controller.k8sclient.retry.max controller.kubectl.parallelism.limit controller.log.format controller.log.level controller.metrics.application.conditions controller.metrics.application.labels controller.metrics.cache.expiration controller.metrics.cluster.labels controller.operation.processors controller.profile.enabled controller.repo.error.grace.period.seconds controller.repo.server.ca.cert.path controller.repo.server.client.cert.key.path controller.repo.server.client.cert.path controller.repo.server.plaintext controller.repo.server.strict.tls controller.repo.server.timeout.seconds controller.resource.health.persist controller.self.heal.backoff.cap.seconds controller.self.heal.backoff.factor controller.self.heal.backoff.timeout.seconds controller.self.heal.timeout.seconds controller.sharding.algorithm controller.status.processors controller.sync.timeout.seconds controller.sync.wave.delay.seconds dexserver.connector.failure.continue dexserver.disable.tls dexserver.log.format dexserver.log.level hydrator.enabled log.format.timestamp notificationscontroller.log.format notificationscontroller.log.level notificationscontroller.processors.count notificationscontroller.repo.server.ca.cert.path notificationscontroller.repo.server.client.cert.key.path notificationscontroller.repo.server.client.cert.path notificationscontroller.repo.server.plaintext notificationscontroller.selfservice.enabled otlp.address otlp.attrs otlp.headers otlp.insecure otlp.sample.ratio redis.compression redis.db redis.sentinel.hosts redis.sentinel.master redis.server repo.server reposerver.allow.oob.symlinks reposerver.client.ca.path reposerver.default.cache.expiration reposerver.disable.oci.manifest.max.extracted.size reposerver.disable.tls reposerver.enable.builtin.git.config reposerver.enable.git.submodule reposerver.git.lsremote.parallelism.limit reposerver.git.request.timeout reposerver.grpc.enable.txt.service.config reposerver.include.hidden.directories reposerver.listen.address reposerver.log.format reposerver.log.level reposerver.max.combined.directory.manifests.size reposerver.metrics.listen.address reposerver.oci.layer.media.types reposerver.oci.manifest.max.extracted.size reposerver.parallelism.limit reposerver.plugin.tar.exclusions reposerver.plugin.use.manifest.generate.paths reposerver.profile.enabled reposerver.repo.cache.expiration reposerver.streamed.manifest.max.extracted.size reposerver.streamed.manifest.max.tar.size reposerver.tls.ciphers reposerver.tls.maxversion reposerver.tls.minversion server.api.content.types server.app.state.cache.expiration server.basehref server.connection.status.cache.expiration server.default.cache.expiration server.dex.server server.dex.server.plaintext server.dex.server.strict.tls server.disable.auth server.disable.swagger.ui server.enable.gzip server.enable.proxy.extension server.glob.cache.size server.grpc.enable.txt.service.config server.insecure server.k8s.client.burst server.k8s.client.max.idle.connections server.k8s.client.qps server.k8s.tcp.idle.timeout server.k8s.tcp.keepalive server.k8s.tcp.timeout server.k8s.tls.handshake.timeout server.k8sclient.retry.base.backoff server.k8sclient.retry.max server.listen.address server.log.format server.log.level server.metrics.listen.address server.oidc.cache.expiration server.profile.enabled server.repo.server.ca.cert.path server.repo.server.client.cert.key.path server.repo.server.client.cert.path server.repo.server.plaintext server.repo.server.strict.tls server.repo.server.timeout.seconds server.rootpath server.staticassets server.sync.replace.allowed server.tls.ciphers server.tls.maxversion server.tls.minversion server.webhook.parallelism.limit server.webhook.refresh.workers server.x.frame.options ";

    fn data(keys: &str) -> Value {
        let m: Map<String, Value> = keys
            .split_whitespace()
            .map(|k| (k.to_string(), Value::String(String::new())))
            .collect();
        Value::Object(m)
    }

    #[test]
    fn no_documented_key_is_noted() {
        let parse = |_: &str| Ok(Value::Null);
        let s = super::ArgoCdSettings::read(Some(&data(ARGOCD_CM)), &parse);
        assert!(s.notes.is_empty(), "{:#?}", s.notes);
        let p = super::CmdParams::read(Some(&data(CMD_PARAMS)));
        assert!(p.notes.is_empty(), "{:#?}", p.notes);
    }
}
