//! Argo CD facts about one object: what Argo CD will *do* with it.
//!
//! Everything here follows `reference/argocd-sync-semantics.md` (sections 2, 3, 6 and 7), which
//! was written from gitops-engine and the Argo CD controller. The functions are pure and
//! infallible: Argo CD never rejects a bad annotation, it silently falls back, so we compute the
//! fallback exactly *and* remember what was invalid so that rules can explain it.

use std::fmt;

use serde::Serialize;

use super::Resource;

/// `argocd.argoproj.io/hook`
pub const HOOK: &str = "argocd.argoproj.io/hook";
/// `argocd.argoproj.io/hook-delete-policy`
pub const HOOK_DELETE_POLICY: &str = "argocd.argoproj.io/hook-delete-policy";
/// `argocd.argoproj.io/sync-wave`
pub const SYNC_WAVE: &str = "argocd.argoproj.io/sync-wave";
/// `argocd.argoproj.io/sync-options`
pub const SYNC_OPTIONS: &str = "argocd.argoproj.io/sync-options";
/// `argocd.argoproj.io/compare-options`
pub const COMPARE_OPTIONS: &str = "argocd.argoproj.io/compare-options";
/// `argocd.argoproj.io/tracking-id`
pub const TRACKING_ID: &str = "argocd.argoproj.io/tracking-id";
/// The default instance label (`application.instanceLabelKey`).
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// Finalizer Argo CD (2.14+) puts on hooks so they cannot vanish before it reads their result.
pub const HOOK_FINALIZER: &str = "argocd.argoproj.io/hook-finalizer";
/// `helm.sh/hook`
pub const HELM_HOOK: &str = "helm.sh/hook";
/// `helm.sh/hook-weight`
pub const HELM_HOOK_WEIGHT: &str = "helm.sh/hook-weight";
/// `helm.sh/hook-delete-policy`
pub const HELM_HOOK_DELETE_POLICY: &str = "helm.sh/hook-delete-policy";

/// A sync phase. The derived order is Argo CD's phase order (`syncPhaseOrder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum SyncPhase {
    /// Before anything else; every PreSync step precedes every Sync step, whatever the waves.
    PreSync,
    /// Normal resources and `Sync` hooks.
    Sync,
    /// After the Sync phase is fully Healthy.
    PostSync,
    /// Only when the sync failed; all SyncFail tasks run together.
    SyncFail,
}

impl SyncPhase {
    /// All phases in order.
    pub const ALL: [SyncPhase; 4] = [
        SyncPhase::PreSync,
        SyncPhase::Sync,
        SyncPhase::PostSync,
        SyncPhase::SyncFail,
    ];

    /// Exact parse of the name as Argo CD writes it (`syncResult.resources[].syncPhase`).
    pub fn parse(s: &str) -> Option<SyncPhase> {
        SyncPhase::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// The name as written in annotations and Argo CD messages.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncPhase::PreSync => "PreSync",
            SyncPhase::Sync => "Sync",
            SyncPhase::PostSync => "PostSync",
            SyncPhase::SyncFail => "SyncFail",
        }
    }
}

impl fmt::Display for SyncPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A value of `argocd.argoproj.io/hook` that Argo CD understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum HookType {
    /// gitops-engine `PreSync`.
    PreSync,
    /// gitops-engine `Sync`.
    Sync,
    /// gitops-engine `PostSync`.
    PostSync,
    /// gitops-engine `SyncFail`.
    SyncFail,
    /// gitops-engine `Skip`: never applied (alone), never pruned.
    Skip,
    /// Argo CD controller only: runs before the app's resources are deleted.
    PreDelete,
    /// Argo CD controller only: runs after the app's resources are deleted.
    PostDelete,
}

impl HookType {
    /// Exact, case-sensitive parse of an Argo CD hook value (`presync` is *not* valid).
    pub fn parse(s: &str) -> Option<HookType> {
        Some(match s {
            "PreSync" => HookType::PreSync,
            "Sync" => HookType::Sync,
            "PostSync" => HookType::PostSync,
            "SyncFail" => HookType::SyncFail,
            "Skip" => HookType::Skip,
            "PreDelete" => HookType::PreDelete,
            "PostDelete" => HookType::PostDelete,
            _ => return None,
        })
    }

    /// The gitops-engine sync phase of this hook type, if it has one.
    pub fn phase(self) -> Option<SyncPhase> {
        match self {
            HookType::PreSync => Some(SyncPhase::PreSync),
            HookType::Sync => Some(SyncPhase::Sync),
            HookType::PostSync => Some(SyncPhase::PostSync),
            HookType::SyncFail => Some(SyncPhase::SyncFail),
            HookType::Skip | HookType::PreDelete | HookType::PostDelete => None,
        }
    }

    /// True for the types gitops-engine itself knows (`NewHookType`); delete hooks are not.
    pub fn is_engine_type(self) -> bool {
        !matches!(self, HookType::PreDelete | HookType::PostDelete)
    }

    /// The name as written in the annotation.
    pub fn as_str(self) -> &'static str {
        match self {
            HookType::PreSync => "PreSync",
            HookType::Sync => "Sync",
            HookType::PostSync => "PostSync",
            HookType::SyncFail => "SyncFail",
            HookType::Skip => "Skip",
            HookType::PreDelete => "PreDelete",
            HookType::PostDelete => "PostDelete",
        }
    }
}

/// What a `helm.sh/hook` item means to Argo CD (section 2.4 of the spec).
pub fn helm_hook_type(item: &str) -> Option<HookType> {
    match item {
        "pre-install" | "pre-upgrade" => Some(HookType::PreSync),
        "post-install" | "post-upgrade" => Some(HookType::PostSync),
        "pre-delete" => Some(HookType::PreDelete),
        "post-delete" => Some(HookType::PostDelete),
        _ => None,
    }
}

/// A hook delete policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum DeletePolicy {
    /// Delete the hook when the whole operation succeeds.
    HookSucceeded,
    /// Delete completed hooks when the operation fails.
    HookFailed,
    /// Delete the previous object with the same name before creating the hook (the default).
    BeforeHookCreation,
}

impl DeletePolicy {
    /// Exact parse of an Argo CD value.
    pub fn parse(s: &str) -> Option<DeletePolicy> {
        Some(match s {
            "HookSucceeded" => DeletePolicy::HookSucceeded,
            "HookFailed" => DeletePolicy::HookFailed,
            "BeforeHookCreation" => DeletePolicy::BeforeHookCreation,
            _ => return None,
        })
    }

    /// Exact parse of a Helm value.
    pub fn parse_helm(s: &str) -> Option<DeletePolicy> {
        Some(match s {
            "hook-succeeded" => DeletePolicy::HookSucceeded,
            "hook-failed" => DeletePolicy::HookFailed,
            "before-hook-creation" => DeletePolicy::BeforeHookCreation,
            _ => return None,
        })
    }
}

/// Where an object's wave came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum WaveSource {
    /// `argocd.argoproj.io/sync-wave` parsed.
    SyncWave,
    /// `sync-wave` missing or invalid, `helm.sh/hook-weight` parsed.
    HookWeight,
    /// Neither parsed: 0.
    Default,
}

/// Why Argo CD never applies an object during a sync.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case", tag = "reason")]
pub enum Ignored {
    /// `argocd.argoproj.io/hook: Skip` alone: not applied, not pruned, not in sync status.
    Skip,
    /// A hook annotation with no usable type (`presync`, `Garbage`, an unsupported Helm hook such
    /// as `test`): dropped before planning, never applied, never pruned.
    GarbageHook,
    /// Only PreDelete/PostDelete types: runs at Application deletion, not during a sync.
    DeleteHookOnly,
}

impl Ignored {
    /// One sentence for plan output.
    pub fn explain(&self) -> &'static str {
        match self {
            Ignored::Skip => "hook: Skip — never applied and never pruned",
            Ignored::GarbageHook => {
                "hook annotation has no type Argo CD knows — silently dropped, never applied"
            }
            Ignored::DeleteHookOnly => {
                "PreDelete/PostDelete hook — runs only when the Application is deleted"
            }
        }
    }
}

/// Parsed `argocd.argoproj.io/sync-options` (or an app's `syncPolicy.syncOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SyncOptions {
    /// Every item, trimmed, de-duplicated, in first-seen order.
    pub items: Vec<String>,
    /// Items Argo CD does not know (typos such as `PruneLast=True` are silently ignored).
    pub unknown: Vec<String>,
}

/// Every `key=value` sync option Argo CD reads (resource or app level).
const KNOWN_SYNC_OPTIONS: &[&str] = &[
    "Prune=false",
    "Prune=confirm",
    "Prune=true",
    "PruneLast=true",
    "Delete=false",
    "Delete=confirm",
    "Delete=true",
    "Replace=true",
    "Replace=false",
    "Force=true",
    "ServerSideApply=true",
    "ServerSideApply=false",
    "SkipDryRunOnMissingResource=true",
    "Validate=false",
    "Validate=true",
    "CreateNamespace=true",
    "ApplyOutOfSyncOnly=true",
    "RespectIgnoreDifferences=true",
    "FailOnSharedResource=true",
    "ClientSideApplyMigration=false",
    "PrunePropagationPolicy=background",
    "PrunePropagationPolicy=foreground",
    "PrunePropagationPolicy=orphan",
    // The other value of a boolean option: the default, so no effect, but no mistake either.
    "PruneLast=false",
    "Force=false",
    "SkipDryRunOnMissingResource=false",
    "CreateNamespace=false",
    "ApplyOutOfSyncOnly=false",
    "RespectIgnoreDifferences=false",
    "FailOnSharedResource=false",
    "ClientSideApplyMigration=true",
];

/// The known sync option an unknown `item` was probably meant as: the same ignoring case, else
/// the nearest by edit distance (at most 3 edits, e.g. `ServiceSideApply=true`).
pub fn closest_sync_option(item: &str) -> Option<&'static str> {
    if let Some(k) = KNOWN_SYNC_OPTIONS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(item.trim()))
    {
        return Some(k);
    }
    KNOWN_SYNC_OPTIONS
        .iter()
        .map(|k| (edit_distance(k, item.trim()), *k))
        .filter(|(d, _)| *d <= 3)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let above = row.get(j + 1).copied().unwrap_or(0);
            let left = row.get(j).copied().unwrap_or(0);
            let cost = usize::from(ca != *cb);
            let best = (prev + cost).min(above + 1).min(left + 1);
            prev = above;
            if let Some(slot) = row.get_mut(j + 1) {
                *slot = best;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

impl SyncOptions {
    /// Parses a CSV annotation value.
    pub fn parse(csv: &str) -> SyncOptions {
        Self::from_items(parse_csv(csv))
    }

    /// Builds from a list (an Application's `syncPolicy.syncOptions`), trimming each item.
    pub fn from_items<I, S>(items: I) -> SyncOptions
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut out = SyncOptions::default();
        for item in items {
            let item = item.as_ref().trim();
            if item.is_empty() || out.items.iter().any(|i| i == item) {
                continue;
            }
            if !KNOWN_SYNC_OPTIONS.contains(&item) {
                out.unknown.push(item.to_string());
            }
            out.items.push(item.to_string());
        }
        out
    }

    /// True if the exact item (e.g. `PruneLast=true`) is present.
    pub fn has(&self, item: &str) -> bool {
        self.items.iter().any(|i| i == item)
    }
}

/// A parsed tracking id `<app>:<group>/<kind>:<namespace>/<name>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TrackingId {
    /// `<appName>` or `<appNamespace>_<appName>`.
    pub app_instance: String,
    /// API group, empty for core.
    pub group: String,
    /// Kind.
    pub kind: String,
    /// Namespace (the app destination namespace for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
}

impl TrackingId {
    /// Parses exactly as Argo CD does: three `:` parts, the last two with exactly two `/` parts.
    pub fn parse(s: &str) -> Option<TrackingId> {
        let parts: Vec<&str> = s.split(':').collect();
        let [app, gk, nn] = parts.as_slice() else {
            return None;
        };
        let gk: Vec<&str> = gk.split('/').collect();
        let nn: Vec<&str> = nn.split('/').collect();
        let ([group, kind], [namespace, name]) = (gk.as_slice(), nn.as_slice()) else {
            return None;
        };
        Some(TrackingId {
            app_instance: (*app).to_string(),
            group: (*group).to_string(),
            kind: (*kind).to_string(),
            namespace: (*namespace).to_string(),
            name: (*name).to_string(),
        })
    }

    /// The Application name without an `<appNamespace>_` prefix.
    pub fn app_name(&self) -> &str {
        self.app_instance
            .split_once('_')
            .map_or(self.app_instance.as_str(), |(_, n)| n)
    }
}

/// How the object is tied to an Application, if at all.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Tracking {
    /// The parsed `tracking-id` annotation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<TrackingId>,
    /// The raw `tracking-id` when present but malformed (Argo CD rejects it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_id: Option<String>,
    /// The `app.kubernetes.io/instance` label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_label: Option<String>,
}

impl Tracking {
    /// The owning Application's name: from the tracking id, else from the instance label.
    pub fn app_name(&self) -> Option<&str> {
        self.id
            .as_ref()
            .map(TrackingId::app_name)
            .or(self.instance_label.as_deref())
    }

    /// The Application's instance name (`<namespace>_<name>` outside the control-plane
    /// namespace) from the tracking id, else the instance label: what tells two Applications of
    /// one name apart.
    pub fn app_instance(&self) -> Option<&str> {
        self.id
            .as_ref()
            .map(|id| id.app_instance.as_str())
            .or(self.instance_label.as_deref())
    }
}

/// Everything Argo CD decides about one object from its annotations. This is `input.sync` in the
/// Rego input document, so field names are part of the policy contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncFacts {
    /// The phases the object gets a task in (empty when ignored or skipped).
    pub phases: Vec<SyncPhase>,
    /// gitops-engine `IsHook`.
    pub is_hook: bool,
    /// `hook: Skip` alone.
    pub skip: bool,
    /// Why the object is never applied by a sync, if it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ignored: Option<Ignored>,
    /// Valid hook types in effect (Argo types if any were valid, else Helm-mapped ones), plus
    /// PreDelete/PostDelete.
    pub hook_types: Vec<HookType>,
    /// Items of `argocd.argoproj.io/hook` Argo CD does not know (e.g. `presync`).
    pub invalid_hook_values: Vec<String>,
    /// Items of `helm.sh/hook`, as written.
    pub helm_hooks: Vec<String>,
    /// `helm.sh/hook` items Argo CD never runs (`test`, `pre-rollback`, ...).
    pub unsupported_helm_hooks: Vec<String>,
    /// The effective wave.
    pub wave: i64,
    /// The raw `sync-wave` annotation, if present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wave_raw: Option<String>,
    /// False when `sync-wave` is present but not a Go `Atoi` integer.
    pub wave_valid: bool,
    /// Where `wave` came from.
    pub wave_source: WaveSource,
    /// The raw `helm.sh/hook-weight` when present but not an integer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_hook_weight: Option<String>,
    /// Effective delete policies (union of Argo and Helm; `[BeforeHookCreation]` by default).
    /// Argo CD only consults them when `is_hook`.
    pub delete_policies: Vec<DeletePolicy>,
    /// True when at least one delete-policy annotation (Argo or Helm) is present.
    pub delete_policy_set: bool,
    /// Delete-policy items that are not valid (silently dropped by Argo CD).
    pub invalid_delete_policies: Vec<String>,
    /// `argocd.argoproj.io/sync-options`.
    pub sync_options: SyncOptions,
    /// `argocd.argoproj.io/compare-options`, CSV items.
    pub compare_options: Vec<String>,
    /// Tracking id / instance label.
    pub tracking: Tracking,
}

impl SyncFacts {
    /// Computes the facts of one object.
    pub fn of(r: &Resource) -> SyncFacts {
        let argo_present = r.has_annotation(HOOK);
        let argo_items = parse_csv(r.annotation(HOOK).unwrap_or_default());
        let helm_raw = r.annotation(HELM_HOOK);
        let helm_items = parse_csv(helm_raw.unwrap_or_default());

        let mut invalid_hook_values = Vec::new();
        let mut argo_types: Vec<HookType> = Vec::new();
        for item in &argo_items {
            match HookType::parse(item) {
                Some(t) => push_unique(&mut argo_types, t),
                None => invalid_hook_values.push(item.clone()),
            }
        }
        // gitops-engine `Types`: valid engine types from the Argo annotation, else Helm's.
        let mut engine_types: Vec<HookType> = argo_types
            .iter()
            .copied()
            .filter(|t| t.is_engine_type())
            .collect();
        let mut unsupported_helm_hooks = Vec::new();
        let mut helm_types = Vec::new();
        for item in &helm_items {
            match helm_hook_type(item) {
                Some(t) => push_unique(&mut helm_types, t),
                None if item == "crd-install" => {}
                None => unsupported_helm_hooks.push(item.clone()),
            }
        }
        if engine_types.is_empty() {
            engine_types = helm_types
                .iter()
                .copied()
                .filter(|t| t.is_engine_type())
                .collect();
        }
        // Argo CD controller: delete hooks come from either annotation.
        let delete_types: Vec<HookType> = argo_types
            .iter()
            .chain(helm_types.iter())
            .copied()
            .filter(|t| !t.is_engine_type())
            .fold(Vec::new(), |mut acc, t| {
                push_unique(&mut acc, t);
                acc
            });

        let skip = engine_types.contains(&HookType::Skip) && engine_types.len() == 1;
        let is_hook = if argo_present {
            !skip
        } else {
            helm_raw.is_some_and(|raw| raw != "crd-install")
        };
        let mut phases: Vec<SyncPhase> = Vec::new();
        if is_hook {
            for t in &engine_types {
                if let Some(p) = t.phase() {
                    push_unique(&mut phases, p);
                }
            }
        } else if !skip {
            phases.push(SyncPhase::Sync);
        }
        let ignored = if skip {
            Some(Ignored::Skip)
        } else if is_hook && phases.is_empty() {
            // The controller removes delete hooks before the engine sees them; anything else
            // with no engine type is a garbage hook.
            if delete_types.is_empty() {
                Some(Ignored::GarbageHook)
            } else {
                Some(Ignored::DeleteHookOnly)
            }
        } else {
            None
        };
        let mut hook_types = engine_types;
        for t in delete_types {
            push_unique(&mut hook_types, t);
        }

        let wave_raw = r.annotation(SYNC_WAVE).map(str::to_string);
        let weight_raw = r.annotation(HELM_HOOK_WEIGHT);
        let wave_parsed = wave_raw.as_deref().and_then(go_atoi);
        let weight_parsed = weight_raw.and_then(go_atoi);
        let (wave, wave_source) = match (wave_parsed, weight_parsed) {
            (Some(w), _) => (w, WaveSource::SyncWave),
            (None, Some(w)) => (w, WaveSource::HookWeight),
            (None, None) => (0, WaveSource::Default),
        };
        let wave_valid = wave_raw.is_none() || wave_parsed.is_some();
        let invalid_hook_weight = weight_raw
            .filter(|_| weight_parsed.is_none())
            .map(str::to_string);

        let (delete_policies, invalid_delete_policies) = delete_policies_of(r);
        let delete_policy_set =
            r.has_annotation(HOOK_DELETE_POLICY) || r.has_annotation(HELM_HOOK_DELETE_POLICY);

        let tracking_raw = r.annotation(TRACKING_ID);
        let tracking_id = tracking_raw.and_then(TrackingId::parse);
        let tracking = Tracking {
            invalid_id: tracking_raw
                .filter(|_| tracking_id.is_none())
                .map(str::to_string),
            id: tracking_id,
            instance_label: r.label(INSTANCE_LABEL).map(str::to_string),
        };

        SyncFacts {
            phases,
            is_hook,
            skip,
            ignored,
            hook_types,
            invalid_hook_values,
            helm_hooks: helm_items,
            unsupported_helm_hooks,
            wave,
            wave_raw,
            wave_valid,
            wave_source,
            invalid_hook_weight,
            delete_policies,
            delete_policy_set,
            invalid_delete_policies,
            sync_options: SyncOptions::parse(r.annotation(SYNC_OPTIONS).unwrap_or_default()),
            compare_options: parse_csv(r.annotation(COMPARE_OPTIONS).unwrap_or_default()),
            tracking,
        }
    }
}

/// Union of Argo and Helm delete policies (Argo first), default `[BeforeHookCreation]`, plus the
/// items that were dropped as invalid.
fn delete_policies_of(r: &Resource) -> (Vec<DeletePolicy>, Vec<String>) {
    let mut policies = Vec::new();
    let mut invalid = Vec::new();
    for item in parse_csv(r.annotation(HOOK_DELETE_POLICY).unwrap_or_default()) {
        match DeletePolicy::parse(&item) {
            Some(p) => push_unique(&mut policies, p),
            None => invalid.push(item),
        }
    }
    for item in parse_csv(r.annotation(HELM_HOOK_DELETE_POLICY).unwrap_or_default()) {
        match DeletePolicy::parse_helm(&item) {
            Some(p) => push_unique(&mut policies, p),
            None => invalid.push(item),
        }
    }
    if policies.is_empty() {
        policies.push(DeletePolicy::BeforeHookCreation);
    }
    (policies, invalid)
}

/// gitops-engine `GetAnnotationCSVs`: split on `,`, trim, drop empty, de-duplicate (first-seen
/// order, as the engine inside argo-cd does).
pub fn parse_csv(value: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        if !out.iter().any(|o| o == item) {
            out.push(item.to_string());
        }
    }
    out
}

/// Go's `strconv.Atoi` on a 64-bit platform: optional sign, ASCII decimal digits only, within
/// `i64`. Rejects spaces, `1.5`, `0x10`, `1_0`, `""` and a bare sign.
pub fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Rust's parser accepts exactly the same grammar once the checks above have passed
    // (a leading '+' included) and reports overflow as an error, like Go's ErrRange.
    s.parse::<i64>().ok()
}

/// The name Argo CD gives a hook that has only `generateName` (section 2.7):
/// `generateName + lower("<rev7>-<phase>-<unixStartedAt>")`.
pub fn generated_hook_name(
    generate_name: &str,
    revision: &str,
    phase: SyncPhase,
    started_at_unix: i64,
) -> String {
    let rev = if revision.len() >= 8 {
        revision.get(..7).unwrap_or(revision)
    } else {
        revision
    };
    format!(
        "{generate_name}{}",
        format!("{rev}-{}-{started_at_unix}", phase.as_str()).to_lowercase()
    )
}

fn push_unique<T: PartialEq>(v: &mut Vec<T>, item: T) {
    if !v.contains(&item) {
        v.push(item);
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn an_unknown_sync_option_is_matched_to_the_one_meant() {
        assert_eq!(
            closest_sync_option("ServiceSideApply=true"),
            Some("ServerSideApply=true")
        );
        assert_eq!(
            closest_sync_option("prunelast=TRUE"),
            Some("PruneLast=true")
        );
        assert_eq!(closest_sync_option("Something=else"), None);
        assert!(
            SyncOptions::from_items(["CreateNamespace=false"])
                .unknown
                .is_empty()
        );
    }

    use super::*;
    use serde_json::{Map, Value, json};

    /// A test object of `kind` named `name` with the given annotations.
    fn obj(kind: &str, name: &str, annotations: &[(&str, &str)]) -> Resource {
        let ann: Map<String, Value> = annotations
            .iter()
            .map(|(k, v)| ((*k).to_string(), Value::String((*v).to_string())))
            .collect();
        Resource::from_value(
            json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "annotations": ann}}),
            None,
        )
        .unwrap()
    }

    fn facts(annotations: &[(&str, &str)]) -> SyncFacts {
        SyncFacts::of(&obj("Pod", "p", annotations))
    }

    #[test]
    fn a_plain_resource_is_in_the_sync_phase_at_wave_zero() {
        let f = facts(&[]);
        assert_eq!(f.phases, vec![SyncPhase::Sync]);
        assert!(!f.is_hook);
        assert_eq!(f.wave, 0);
        assert_eq!(f.wave_source, WaveSource::Default);
        assert!(f.ignored.is_none());
    }

    #[test]
    fn skip_alone_has_no_phase_and_is_not_a_hook_c11() {
        let f = facts(&[(HOOK, "Skip")]);
        assert!(f.skip);
        assert!(!f.is_hook);
        assert!(f.phases.is_empty());
        assert_eq!(f.ignored, Some(Ignored::Skip));
    }

    #[test]
    fn skip_with_other_types_is_a_hook_in_those_phases_c12() {
        let f = facts(&[(HOOK, "Skip,PreSync,PostSync")]);
        assert!(!f.skip);
        assert!(f.is_hook);
        assert_eq!(f.phases, vec![SyncPhase::PreSync, SyncPhase::PostSync]);
    }

    #[test]
    fn wrong_case_or_garbage_hook_values_are_silently_ignored_c13() {
        for v in ["presync", "Garbage", ""] {
            let f = facts(&[(HOOK, v)]);
            assert!(f.is_hook, "{v}");
            assert!(f.phases.is_empty(), "{v}");
            assert_eq!(f.ignored, Some(Ignored::GarbageHook), "{v}");
        }
        assert_eq!(
            facts(&[(HOOK, "presync")]).invalid_hook_values,
            vec!["presync"]
        );
    }

    #[test]
    fn a_valid_type_next_to_garbage_still_makes_a_hook_c14() {
        let f = facts(&[(HOOK, "Sync,Garbage")]);
        assert!(f.is_hook);
        assert_eq!(f.phases, vec![SyncPhase::Sync]);
        assert!(f.ignored.is_none());
        assert_eq!(f.invalid_hook_values, vec!["Garbage"]);
    }

    #[test]
    fn helm_hooks_map_to_argo_phases_c15() {
        let pre = facts(&[(HELM_HOOK, "pre-install")]);
        assert_eq!(pre.phases, vec![SyncPhase::PreSync]);
        assert!(pre.is_hook);
        let post = facts(&[(HELM_HOOK, "post-upgrade")]);
        assert_eq!(post.phases, vec![SyncPhase::PostSync]);
        let both = facts(&[(HELM_HOOK, "pre-install, pre-upgrade")]);
        assert_eq!(both.phases, vec![SyncPhase::PreSync]);

        let test = facts(&[(HELM_HOOK, "test")]);
        assert_eq!(test.ignored, Some(Ignored::GarbageHook));
        assert_eq!(test.unsupported_helm_hooks, vec!["test"]);
        let rollback = facts(&[(HELM_HOOK, "pre-rollback")]);
        assert_eq!(rollback.ignored, Some(Ignored::GarbageHook));

        let crd = facts(&[(HELM_HOOK, "crd-install")]);
        assert!(!crd.is_hook);
        assert_eq!(crd.phases, vec![SyncPhase::Sync]);
        assert!(crd.unsupported_helm_hooks.is_empty());
        let crd_and_pre = facts(&[(HELM_HOOK, "crd-install,pre-install")]);
        assert!(crd_and_pre.is_hook);
        assert_eq!(crd_and_pre.phases, vec![SyncPhase::PreSync]);

        let del = facts(&[(HELM_HOOK, "pre-delete")]);
        assert_eq!(del.ignored, Some(Ignored::DeleteHookOnly));
        assert_eq!(del.hook_types, vec![HookType::PreDelete]);
    }

    #[test]
    fn argo_hook_types_win_but_delete_policies_are_the_union_c16() {
        let f = facts(&[
            (HOOK, "Sync"),
            (HELM_HOOK, "pre-install"),
            (HELM_HOOK_WEIGHT, "-5"),
            (HOOK_DELETE_POLICY, "BeforeHookCreation"),
            (HELM_HOOK_DELETE_POLICY, "hook-succeeded"),
        ]);
        assert_eq!(f.phases, vec![SyncPhase::Sync]);
        assert_eq!(f.wave, -5);
        assert_eq!(f.wave_source, WaveSource::HookWeight);
        assert_eq!(
            f.delete_policies,
            vec![
                DeletePolicy::BeforeHookCreation,
                DeletePolicy::HookSucceeded
            ]
        );
    }

    #[test]
    fn waves_follow_go_atoi_with_the_hook_weight_fallback_c17() {
        let cases: &[(&[(&str, &str)], i64)] = &[
            (&[], 0),
            (&[(SYNC_WAVE, "1")], 1),
            (&[(HELM_HOOK_WEIGHT, "1")], 1),
            (&[(SYNC_WAVE, "-5")], -5),
            (&[(SYNC_WAVE, "+3")], 3),
            (&[(SYNC_WAVE, "abc"), (HELM_HOOK_WEIGHT, "3")], 3),
            (&[(SYNC_WAVE, " 2")], 0),
            (&[(SYNC_WAVE, "1.5")], 0),
            (&[(SYNC_WAVE, "")], 0),
            (&[(SYNC_WAVE, "99999999999999999999")], 0),
        ];
        for (ann, want) in cases {
            assert_eq!(facts(ann).wave, *want, "{ann:?}");
        }
        let bad = facts(&[(SYNC_WAVE, "1.5")]);
        assert!(!bad.wave_valid);
        assert_eq!(bad.wave_raw.as_deref(), Some("1.5"));
        assert!(facts(&[(SYNC_WAVE, "007")]).wave_valid);
    }

    #[test]
    fn go_atoi_accepts_exactly_what_go_accepts() {
        assert_eq!(go_atoi("0"), Some(0));
        assert_eq!(go_atoi("-0"), Some(0));
        assert_eq!(go_atoi("+12"), Some(12));
        assert_eq!(go_atoi("9223372036854775807"), Some(i64::MAX));
        assert_eq!(go_atoi("-9223372036854775808"), Some(i64::MIN));
        for bad in ["", "+", "-", "1_0", "0x10", " 1", "1 ", "++1", "１"] {
            assert_eq!(go_atoi(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn delete_policies_default_to_before_hook_creation_c18() {
        let hook = |extra: &[(&str, &str)]| {
            let mut ann = vec![(HOOK, "Sync")];
            ann.extend_from_slice(extra);
            facts(&ann).delete_policies
        };
        use DeletePolicy::*;
        assert_eq!(hook(&[]), vec![BeforeHookCreation]);
        assert_eq!(
            hook(&[(HOOK_DELETE_POLICY, "garbage")]),
            vec![BeforeHookCreation]
        );
        assert_eq!(
            hook(&[(HOOK_DELETE_POLICY, "BeforeHookCreation")]),
            vec![BeforeHookCreation]
        );
        assert_eq!(
            hook(&[(HOOK_DELETE_POLICY, "HookSucceeded")]),
            vec![HookSucceeded]
        );
        assert_eq!(
            hook(&[(HOOK_DELETE_POLICY, "HookFailed")]),
            vec![HookFailed]
        );
        assert_eq!(
            hook(&[(HELM_HOOK_DELETE_POLICY, "hook-succeeded")]),
            vec![HookSucceeded]
        );
        let f = facts(&[(HOOK, "Sync"), (HOOK_DELETE_POLICY, "hooksucceeded")]);
        assert_eq!(f.invalid_delete_policies, vec!["hooksucceeded"]);
    }

    #[test]
    fn delete_policies_mean_nothing_on_a_non_hook_c19() {
        let f = facts(&[(HOOK_DELETE_POLICY, "BeforeHookCreation")]);
        assert!(!f.is_hook);
        assert!(f.delete_policy_set);
        // Parsed, but only hooks have delete policies in Argo CD: the plan never deletes it.
        assert_eq!(f.delete_policies, vec![DeletePolicy::BeforeHookCreation]);
    }

    #[test]
    fn post_sync_and_post_delete_runs_in_post_sync_and_at_deletion() {
        let f = facts(&[(HOOK, "PostSync,PostDelete")]);
        assert_eq!(f.phases, vec![SyncPhase::PostSync]);
        assert!(f.ignored.is_none());
        assert_eq!(f.hook_types, vec![HookType::PostSync, HookType::PostDelete]);
        let only = facts(&[(HOOK, "PreDelete")]);
        assert_eq!(only.ignored, Some(Ignored::DeleteHookOnly));
        assert!(only.invalid_hook_values.is_empty());
    }

    #[test]
    fn csv_items_are_trimmed_deduplicated_and_kept_in_order() {
        assert_eq!(parse_csv(" b, a ,,b,"), vec!["b", "a"]);
        assert!(parse_csv("").is_empty());
    }

    #[test]
    fn sync_options_remember_unknown_items() {
        let o = SyncOptions::parse("PruneLast=true, Replace=True,Prune=false");
        assert!(o.has("PruneLast=true"));
        assert!(o.has("Prune=false"));
        assert_eq!(o.unknown, vec!["Replace=True"]);
    }

    #[test]
    fn tracking_ids_parse_exactly_three_parts_with_two_halves() {
        let t = TrackingId::parse("guestbook:apps/Deployment:default/web").unwrap();
        assert_eq!(t.group, "apps");
        assert_eq!(t.kind, "Deployment");
        assert_eq!(t.namespace, "default");
        assert_eq!(t.name, "web");
        let core = TrackingId::parse("team_guestbook:/ConfigMap:default/cm").unwrap();
        assert_eq!(core.group, "");
        assert_eq!(core.app_name(), "guestbook");
        for bad in [
            "a:b:c:d",
            "a:b/c",
            "a:apps/Deployment:web",
            "a:x/y/z:ns/n",
            "",
        ] {
            assert_eq!(TrackingId::parse(bad), None, "{bad}");
        }
        let r = Resource::from_value(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c",
                "labels": {INSTANCE_LABEL: "shop"},
                "annotations": {TRACKING_ID: "broken"}}}),
            None,
        )
        .unwrap();
        let f = SyncFacts::of(&r);
        assert_eq!(f.tracking.invalid_id.as_deref(), Some("broken"));
        assert_eq!(f.tracking.app_name(), Some("shop"));
    }

    #[test]
    fn unnamed_hooks_get_revision_phase_and_start_time_names_c10() {
        assert_eq!(
            generated_hook_name(
                "mig-",
                "0123456789abcdef",
                SyncPhase::PreSync,
                1_700_000_000
            ),
            "mig-0123456-presync-1700000000"
        );
        assert_eq!(
            generated_hook_name(
                "mig-",
                "0123456789abcdef",
                SyncPhase::PostSync,
                1_700_000_000
            ),
            "mig-0123456-postsync-1700000000"
        );
        assert!(
            generated_hook_name("p-", "FooBarBaz", SyncPhase::PreSync, 1)
                .contains("foobarb-presync-")
        );
        assert!(
            generated_hook_name("p-", "foobar", SyncPhase::PreSync, 1).contains("foobar-presync-")
        );
        assert_eq!(
            generated_hook_name("p-", "", SyncPhase::Sync, 5),
            "p--sync-5"
        );
    }

    #[test]
    fn facts_serialize_with_the_policy_contract_field_names() {
        let v = serde_json::to_value(facts(&[(HOOK, "PreSync"), (SYNC_WAVE, "x")])).unwrap();
        for key in [
            "phases",
            "is_hook",
            "hook_types",
            "invalid_hook_values",
            "wave",
            "wave_raw",
            "wave_valid",
            "wave_source",
            "delete_policies",
            "invalid_delete_policies",
            "helm_hooks",
            "sync_options",
            "tracking",
        ] {
            assert!(v.get(key).is_some(), "missing {key}");
        }
        assert_eq!(v["wave_source"], "default");
        assert_eq!(v["phases"], json!(["PreSync"]));
    }
}
