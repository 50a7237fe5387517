//! Which keys belong to which settings ConfigMap, as Argo CD reads them (`util/settings` for
//! argocd-cm; the `configMapKeyRef`s of the install manifests for argocd-cmd-params-cm), and the
//! key meant for one written in the wrong ConfigMap, in another release's form or misspelt.

use super::{KeyIssue, KeyNote, closest};

/// argocd-cm keys Argo CD reads that no typed field holds (kept as written).
pub const ARGOCD_CM_KEPT: &[&str] = &[
    "url",
    "additionalUrls",
    "admin.enabled",
    "installationID",
    "passwordPattern",
    "cluster.inClusterEnabled",
    "resource.respectRBAC",
    "resource.ignoreResourceUpdatesEnabled",
    "resource.sensitive.mask.annotations",
    "resource.customLabels",
    "resource.includeEventLabelKeys",
    "resource.excludeEventLabelKeys",
    "resource.links",
    "application.links",
    "project.links",
    "application.allowedNodeLabels",
    "application.sync.impersonation.enabled",
    "application.sync.impersonation.enforced",
    "application.sync.requireOverridePrivilegeForRevisionSync",
    "helm.valuesFileSchemes",
    "sourceHydrator.commitMessageTemplate",
    "sourceHydrator.readmeMessageTemplate",
    "commit.author.name",
    "commit.author.email",
    "extension.config",
    "timeout.hard.reconciliation",
    "timeout.reconciliation.jitter",
    "dex.config",
    "oidc.config",
    "oidc.tls.insecure.skip.verify",
    "statusbadge.enabled",
    "statusbadge.url",
    "exec.enabled",
    "exec.shells",
    "users.anonymous.enabled",
    "users.session.duration",
    "ga.trackingid",
    "ga.anonymizeusers",
    "help.chatUrl",
    "help.chatText",
    "server.maxPodLogsToRender",
    "server.rbac.log.enforce.enable",
    "server.rbac.rollback.enforce.enable",
    "server.rbac.disableApplicationFineGrainedRBACInheritance",
    "webhook.maxPayloadSizeMB",
    "webhook.refresh.jitter",
    "webhook.refresh.jitter.threshold",
];

/// Families of argocd-cm keys Argo CD reads (kept as written).
pub const ARGOCD_CM_KEPT_PREFIXES: &[&str] = &[
    "accounts.",
    "dex.",
    "oidc.",
    "ui.",
    "help.download.",
    "webhook.",
    "kustomize.path.",
    "kustomize.version.",
    "kustomize.buildOptions.",
    "extension.config.",
    "statusbadge.",
];

/// argocd-cm keys typed by [`super::ArgoCdSettings`] (besides the customization keys).
pub const ARGOCD_CM_READ: &[&str] = &[
    "resource.customizations",
    "resource.compareoptions",
    "resource.exclusions",
    "resource.inclusions",
    "application.resourceTrackingMethod",
    "application.instanceLabelKey",
    "kustomize.enable",
    "helm.enable",
    "jsonnet.enable",
    "kustomize.buildOptions",
    "timeout.reconciliation",
    "globalProjects",
];

/// argocd-cm keys of older releases: (key, first release without it, what replaced it).
const ARGOCD_CM_REMOVED: &[(&str, u32, &str)] = &[
    (
        "repositories",
        300,
        "repositories are Secrets labelled argocd.argoproj.io/secret-type: repository",
    ),
    (
        "repository.credentials",
        300,
        "credential templates are Secrets labelled argocd.argoproj.io/secret-type: repo-creds",
    ),
    (
        "helm.repositories",
        300,
        "Helm repositories are Secrets labelled argocd.argoproj.io/secret-type: repository",
    ),
];

/// argocd-cmd-params-cm keys read into [`super::CmdParams`].
pub const CMD_PARAMS_READ: &[&str] = &[
    "application.namespaces",
    "controller.sync.timeout.seconds",
    "controller.sync.wave.delay.seconds",
    "controller.diff.server.side",
    "controller.self.heal.timeout.seconds",
    "controller.self.heal.backoff.timeout.seconds",
    "controller.self.heal.backoff.factor",
    "controller.self.heal.backoff.cap.seconds",
    "controller.self.heal.backoff.cooldown.seconds",
    "controller.ignore.normalizer.jq.timeout",
    "controller.resource.health.persist",
    "applicationsetcontroller.policy",
    "applicationsetcontroller.enable.policy.override",
    "applicationsetcontroller.enable.progressive.syncs",
    "applicationsetcontroller.enable.new.git.file.globbing",
    "reposerver.include.hidden.directories",
];

/// The components whose flags live in argocd-cmd-params-cm, by key prefix. A key with one of
/// these prefixes is a cmd-params key (argocd-cm has none), known or not.
pub const CMD_PARAMS_PREFIXES: &[&str] = &[
    "controller.",
    "reposerver.",
    "applicationsetcontroller.",
    "notificationscontroller.",
    "dexserver.",
    "commitserver.",
    "redis.",
    "otlp.",
];

/// Other argocd-cmd-params-cm keys Argo CD reads (kept as written). `server.*` keys of
/// cmd-params are listed one by one, since argocd-cm has `server.*` keys of its own.
pub const CMD_PARAMS_KEPT: &[&str] = &[
    "hydrator.enabled",
    "repo.server",
    "commit.server",
    "log.format.timestamp",
    "server.api.content.types",
    "server.app.state.cache.expiration",
    "server.basehref",
    "server.connection.status.cache.expiration",
    "server.default.cache.expiration",
    "server.dex.server",
    "server.dex.server.plaintext",
    "server.dex.server.strict.tls",
    "server.disable.auth",
    "server.disable.swagger.ui",
    "server.enable.gzip",
    "server.enable.proxy.extension",
    "server.glob.cache.size",
    "server.grpc.enable.txt.service.config",
    "server.insecure",
    "server.k8s.client.burst",
    "server.k8s.client.max.idle.connections",
    "server.k8s.client.qps",
    "server.k8s.tcp.idle.timeout",
    "server.k8s.tcp.keepalive",
    "server.k8s.tcp.timeout",
    "server.k8s.tls.handshake.timeout",
    "server.k8sclient.retry.base.backoff",
    "server.k8sclient.retry.max",
    "server.listen.address",
    "server.log.format",
    "server.log.level",
    "server.metrics.listen.address",
    "server.oidc.cache.expiration",
    "server.profile.enabled",
    "server.repo.server.ca.cert.path",
    "server.repo.server.client.cert.key.path",
    "server.repo.server.client.cert.path",
    "server.repo.server.plaintext",
    "server.repo.server.strict.tls",
    "server.repo.server.timeout.seconds",
    "server.rootpath",
    "server.staticassets",
    "server.sync.replace.allowed",
    "server.tls.ciphers",
    "server.tls.maxversion",
    "server.tls.minversion",
    "server.webhook.parallelism.limit",
    "server.webhook.refresh.workers",
    "server.x.frame.options",
];

/// True when argocd-cmd-params-cm holds `key` (known or in a component's family).
pub fn is_cmd_params_key(key: &str) -> bool {
    CMD_PARAMS_READ.contains(&key)
        || CMD_PARAMS_KEPT.contains(&key)
        || CMD_PARAMS_PREFIXES.iter().any(|p| key.starts_with(p))
}

/// True when argocd-cm holds `key` (any key Argo CD reads from it).
pub fn is_argocd_cm_key(key: &str) -> bool {
    ARGOCD_CM_READ.contains(&key)
        || ARGOCD_CM_KEPT.contains(&key)
        || ARGOCD_CM_KEPT_PREFIXES.iter().any(|p| key.starts_with(p))
        || key.starts_with("resource.customizations.")
}

/// The note for an argocd-cm key that is neither read nor kept: misplaced (a cmd-params key),
/// another release's, misspelt, or unknown.
pub fn argocd_cm_unknown(key: &str) -> KeyNote {
    if key == "ignore.normalizer.jq.timeout" {
        return KeyNote::new(
            key,
            KeyIssue::Misplaced,
            Some(format!(
                "controller.ignore.normalizer.jq.timeout in {}",
                super::ARGOCD_CMD_PARAMS_CM
            )),
            "the application controller reads the jq timeout of ignoreDifferences from \
             argocd-cmd-params-cm as controller.ignore.normalizer.jq.timeout; this key is \
             never read, so the 1s default applies"
                .into(),
        );
    }
    if is_cmd_params_key(key) {
        return KeyNote::new(
            key,
            KeyIssue::Misplaced,
            Some(format!("{key} in {}", super::ARGOCD_CMD_PARAMS_CM)),
            "a flag of an Argo CD component, read only from argocd-cmd-params-cm; in argocd-cm \
             it is never read, so the component's default applies"
                .into(),
        );
    }
    if let Some((_, release, instead)) = ARGOCD_CM_REMOVED.iter().find(|(k, ..)| *k == key) {
        let mut note = KeyNote::new(
            key,
            KeyIssue::OtherRelease,
            None,
            format!(
                "read by Argo CD before {}.{} only; {instead}",
                release / 100,
                release % 100
            ),
        );
        note.removed_in = Some(*release);
        return note;
    }
    if let Some(rest) = key
        .strip_prefix("resource.customization.")
        .or_else(|| key.strip_prefix("resources.customizations."))
        .or_else(|| key.strip_prefix("resource.customisations."))
    {
        return KeyNote::new(
            key,
            KeyIssue::Misspelt,
            Some(format!("resource.customizations.{rest}")),
            "Argo CD reads resource customizations only from keys starting with \
             resource.customizations; this key is never read"
                .into(),
        );
    }
    let known = ARGOCD_CM_READ.iter().chain(ARGOCD_CM_KEPT).copied();
    if let Some(meant) = closest(key, known, 2) {
        return KeyNote::new(
            key,
            KeyIssue::Misspelt,
            Some(meant.to_string()),
            "not a key Argo CD reads from argocd-cm; it is ignored".into(),
        );
    }
    KeyNote::new(
        key,
        KeyIssue::Unknown,
        None,
        "not a key Argo CD reads from argocd-cm; it is ignored".into(),
    )
}

/// The note for an argocd-cmd-params-cm key that is neither read nor kept.
pub fn cmd_params_unknown(key: &str) -> KeyNote {
    if key == "ignore.normalizer.jq.timeout" {
        return KeyNote::new(
            key,
            KeyIssue::Misspelt,
            Some("controller.ignore.normalizer.jq.timeout".into()),
            "the controller reads controller.ignore.normalizer.jq.timeout (the diffing guide \
             names it without the controller. prefix); this key is never read, so the 1s \
             default applies"
                .into(),
        );
    }
    if is_argocd_cm_key(key) {
        return KeyNote::new(
            key,
            KeyIssue::Misplaced,
            Some(format!("{key} in {}", super::ARGOCD_CM)),
            "an argocd-cm setting; argocd-cmd-params-cm holds only the components' flags, so \
             it is never read and the default applies"
                .into(),
        );
    }
    let known = CMD_PARAMS_READ.iter().chain(CMD_PARAMS_KEPT).copied();
    if let Some(meant) = closest(key, known, 2) {
        return KeyNote::new(
            key,
            KeyIssue::Misspelt,
            Some(meant.to_string()),
            "not a flag any Argo CD component reads; it is ignored".into(),
        );
    }
    KeyNote::new(
        key,
        KeyIssue::Unknown,
        None,
        "not a flag the Argo CD components read (as far as syncguard knows); it is ignored".into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_in_the_wrong_configmap_name_the_one_meant() {
        let n = argocd_cm_unknown("ignore.normalizer.jq.timeout");
        assert_eq!(n.issue, KeyIssue::Misplaced);
        assert_eq!(
            n.meant.as_deref(),
            Some("controller.ignore.normalizer.jq.timeout in argocd-cmd-params-cm")
        );
        let n = argocd_cm_unknown("controller.sync.timeout.seconds");
        assert_eq!(n.issue, KeyIssue::Misplaced);
        let n = cmd_params_unknown("timeout.reconciliation");
        assert_eq!(n.issue, KeyIssue::Misplaced);
        assert_eq!(
            n.meant.as_deref(),
            Some("timeout.reconciliation in argocd-cm")
        );
        let n = cmd_params_unknown("resource.customizations.health.apps_Deployment");
        assert_eq!(n.issue, KeyIssue::Misplaced);
        let n = cmd_params_unknown("ignore.normalizer.jq.timeout");
        assert_eq!(n.issue, KeyIssue::Misspelt);
    }

    #[test]
    fn other_releases_and_misspellings_are_told_apart() {
        let n = argocd_cm_unknown("repositories");
        assert_eq!(n.issue, KeyIssue::OtherRelease);
        assert_eq!(n.removed_in, Some(300));
        let n = argocd_cm_unknown("resource.customization.health.apps_Deployment");
        assert_eq!(n.issue, KeyIssue::Misspelt);
        assert_eq!(
            n.meant.as_deref(),
            Some("resource.customizations.health.apps_Deployment")
        );
        let n = argocd_cm_unknown("resource.exclusion");
        assert_eq!(n.meant.as_deref(), Some("resource.exclusions"));
        assert_eq!(argocd_cm_unknown("my.own.key").issue, KeyIssue::Unknown);
        assert_eq!(
            cmd_params_unknown("controller.sync.timeout.second")
                .meant
                .as_deref(),
            Some("controller.sync.timeout.seconds")
        );
    }
}
