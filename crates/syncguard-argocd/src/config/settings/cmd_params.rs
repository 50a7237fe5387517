//! argocd-cmd-params-cm: the flags of Argo CD's components, as ConfigMap keys the install
//! manifests pass to each component as environment variables (`configMapKeyRef`, optional).
//!
//! The components read them with Argo CD's `util/env` helpers: a boolean is `true`/`false` in
//! any case, anything else is the default; a number that does not parse is the default; a
//! duration is Go's (`5s`, `1m30s`). Only `applicationsetcontroller.policy` stops its component:
//! an unknown policy makes the ApplicationSet controller exit at start.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::keys::{CMD_PARAMS_KEPT, CMD_PARAMS_PREFIXES, cmd_params_unknown};
use super::{KeyClass, KeyIssue, KeyNote, env_bool, string_data};

/// `applicationsetcontroller.policy` / an ApplicationSet's `applicationsSync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppSetPolicy {
    /// Create, update and delete (the default).
    Sync,
    /// Create only.
    CreateOnly,
    /// Create and update, never delete.
    CreateUpdate,
    /// Create and delete, never update.
    CreateDelete,
}

impl AppSetPolicy {
    /// The policy `text` names, as the controller spells them.
    pub fn parse(text: &str) -> Option<Self> {
        Some(match text {
            "sync" => Self::Sync,
            "create-only" => Self::CreateOnly,
            "create-update" => Self::CreateUpdate,
            "create-delete" => Self::CreateDelete,
            _ => return None,
        })
    }
}

/// The typed argocd-cmd-params-cm.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CmdParams {
    /// `application.namespaces`: namespaces (globs) besides the control plane's.
    pub application_namespaces: Vec<String>,
    /// `controller.sync.timeout.seconds` (0: never; the default).
    pub sync_timeout_seconds: Option<i64>,
    /// `controller.sync.wave.delay.seconds` (default 2).
    pub sync_wave_delay_seconds: Option<i64>,
    /// `controller.diff.server.side`.
    pub diff_server_side: Option<bool>,
    /// `controller.self.heal.timeout.seconds`.
    pub self_heal_timeout_seconds: Option<i64>,
    /// `controller.self.heal.backoff.timeout.seconds`.
    pub self_heal_backoff_timeout_seconds: Option<i64>,
    /// `controller.self.heal.backoff.factor`.
    pub self_heal_backoff_factor: Option<i64>,
    /// `controller.self.heal.backoff.cap.seconds`.
    pub self_heal_backoff_cap_seconds: Option<i64>,
    /// `controller.self.heal.backoff.cooldown.seconds`.
    pub self_heal_backoff_cooldown_seconds: Option<i64>,
    /// `controller.ignore.normalizer.jq.timeout`, a Go duration as written.
    pub ignore_normalizer_jq_timeout: Option<String>,
    /// `controller.resource.health.persist`.
    pub resource_health_persist: Option<bool>,
    /// `applicationsetcontroller.policy`, when set to a policy (empty is the default: none).
    pub appset_policy: Option<AppSetPolicy>,
    /// `applicationsetcontroller.enable.policy.override`, when it says `true`/`false`.
    pub appset_policy_override: Option<bool>,
    /// `applicationsetcontroller.enable.progressive.syncs`.
    pub appset_progressive_syncs: Option<bool>,
    /// `applicationsetcontroller.enable.new.git.file.globbing`.
    pub appset_new_git_file_globbing: Option<bool>,
    /// `reposerver.include.hidden.directories`.
    pub include_hidden_directories: Option<bool>,
    /// Every key, classified.
    pub keys: BTreeMap<String, KeyClass>,
    /// Keys and values that do not do what they are written for.
    pub notes: Vec<KeyNote>,
}

impl CmdParams {
    /// Reads the `data` of an argocd-cmd-params-cm.
    pub fn read(data: Option<&Value>) -> CmdParams {
        let mut p = CmdParams::default();
        let (strings, others) = string_data(data);
        for key in others {
            p.keys.insert(key.to_string(), KeyClass::Unknown);
            p.notes.push(KeyNote::new(
                key,
                KeyIssue::Malformed,
                None,
                "a ConfigMap's data values are strings (quote it); the API server refuses it"
                    .into(),
            ));
        }
        for (key, text) in strings {
            let class = p.read_key(key, text);
            p.keys.insert(key.to_string(), class);
        }
        p
    }

    fn read_key(&mut self, key: &str, text: &str) -> KeyClass {
        let t = text.trim();
        match key {
            "application.namespaces" => {
                self.application_namespaces = t
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect();
            }
            "controller.sync.timeout.seconds" => self.sync_timeout_seconds = self.num(key, t),
            "controller.sync.wave.delay.seconds" => self.sync_wave_delay_seconds = self.num(key, t),
            "controller.self.heal.timeout.seconds" => {
                self.self_heal_timeout_seconds = self.num(key, t)
            }
            "controller.self.heal.backoff.timeout.seconds" => {
                self.self_heal_backoff_timeout_seconds = self.num(key, t)
            }
            "controller.self.heal.backoff.factor" => {
                self.self_heal_backoff_factor = self.num(key, t)
            }
            "controller.self.heal.backoff.cap.seconds" => {
                self.self_heal_backoff_cap_seconds = self.num(key, t)
            }
            "controller.self.heal.backoff.cooldown.seconds" => {
                self.self_heal_backoff_cooldown_seconds = self.num(key, t)
            }
            "controller.diff.server.side" => self.diff_server_side = self.bool(key, t),
            "controller.resource.health.persist" => {
                self.resource_health_persist = self.bool(key, t)
            }
            "controller.ignore.normalizer.jq.timeout" => {
                if !t.is_empty() && !is_go_duration(t) {
                    self.malformed(key, "a Go duration such as `5s`", Some(format!("{t}s")));
                } else if !t.is_empty() {
                    self.ignore_normalizer_jq_timeout = Some(t.to_string());
                }
            }
            "applicationsetcontroller.policy" => match AppSetPolicy::parse(t) {
                Some(policy) => self.appset_policy = Some(policy),
                None if t.is_empty() => {}
                None => self.notes.push(KeyNote::new(
                    key,
                    KeyIssue::Breaks,
                    None,
                    format!(
                        "`{t}` is not a policy (sync, create-only, create-update, \
                         create-delete): the ApplicationSet controller exits at start"
                    ),
                )),
            },
            "applicationsetcontroller.enable.policy.override" => {
                self.appset_policy_override = self.bool(key, t)
            }
            "applicationsetcontroller.enable.progressive.syncs" => {
                self.appset_progressive_syncs = self.bool(key, t)
            }
            "applicationsetcontroller.enable.new.git.file.globbing" => {
                self.appset_new_git_file_globbing = self.bool(key, t)
            }
            "reposerver.include.hidden.directories" => {
                self.include_hidden_directories = self.bool(key, t)
            }
            _ if CMD_PARAMS_KEPT.contains(&key)
                || CMD_PARAMS_PREFIXES.iter().any(|p| key.starts_with(p))
                    && !is_misspelt_known(key) =>
            {
                return KeyClass::Kept;
            }
            _ => {
                self.notes.push(cmd_params_unknown(key));
                return KeyClass::Unknown;
            }
        }
        KeyClass::Read
    }

    /// True when an ApplicationSet's `applicationsSync` is honoured: the override is on, or
    /// (its default) no controller policy is set.
    pub fn policy_override_enabled(&self) -> bool {
        self.appset_policy_override
            .unwrap_or(self.appset_policy.is_none())
    }

    /// The policy the controller applies to an ApplicationSet that asks for `requested`
    /// (`utils.DefaultPolicy`).
    pub fn effective_appset_policy(&self, requested: Option<AppSetPolicy>) -> AppSetPolicy {
        match requested {
            Some(r) if self.policy_override_enabled() => r,
            _ => self.appset_policy.unwrap_or(AppSetPolicy::Sync),
        }
    }

    fn num(&mut self, key: &str, t: &str) -> Option<i64> {
        if t.is_empty() {
            return None;
        }
        match t.parse::<i64>() {
            Ok(n) if n >= 0 => Some(n),
            _ => {
                self.malformed(key, "a whole number of seconds, 0 or more", None);
                None
            }
        }
    }

    fn bool(&mut self, key: &str, t: &str) -> Option<bool> {
        if t.is_empty() {
            return None;
        }
        let b = env_bool(t);
        if b.is_none() {
            self.malformed(key, "`true` or `false`", None);
        }
        b
    }

    fn malformed(&mut self, key: &str, expected: &str, meant: Option<String>) {
        self.notes.push(KeyNote::new(
            key,
            KeyIssue::Malformed,
            meant,
            format!("the value is not {expected}: the component uses its default"),
        ));
    }
}

/// A key of a component's family that is a misspelling of one this module reads: noted rather
/// than kept (`controller.sync.timeout.second`).
fn is_misspelt_known(key: &str) -> bool {
    super::closest(key, super::keys::CMD_PARAMS_READ.iter().copied(), 2).is_some()
}

/// Go's `time.ParseDuration` syntax: a sign, then one or more `<number><unit>`, or `0`.
pub fn is_go_duration(text: &str) -> bool {
    let s = text.strip_prefix(['+', '-']).unwrap_or(text);
    if s == "0" {
        return true;
    }
    let mut rest = s;
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 || rest[..digits] == *"." {
            return false;
        }
        rest = &rest[digits..];
        let unit = ["ns", "us", "µs", "μs", "ms", "s", "m", "h"]
            .into_iter()
            .find(|u| rest.starts_with(u));
        match unit {
            Some(u) => rest = &rest[u.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_key_family_is_read() {
        let p = CmdParams::read(Some(&json!({
            "application.namespaces": "team-*, apps ",
            "controller.sync.timeout.seconds": "600",
            "controller.sync.wave.delay.seconds": "5",
            "controller.diff.server.side": "TRUE",
            "controller.self.heal.timeout.seconds": "5",
            "controller.self.heal.backoff.factor": "2",
            "controller.ignore.normalizer.jq.timeout": "5s",
            "controller.resource.health.persist": "true",
            "applicationsetcontroller.policy": "create-only",
            "applicationsetcontroller.enable.progressive.syncs": "true",
            "applicationsetcontroller.enable.new.git.file.globbing": "false",
            "reposerver.include.hidden.directories": "true",
            "server.insecure": "true",
            "controller.log.level": "debug"
        })));
        assert_eq!(p.application_namespaces, ["team-*", "apps"]);
        assert_eq!(p.sync_timeout_seconds, Some(600));
        assert_eq!(p.sync_wave_delay_seconds, Some(5));
        assert_eq!(p.diff_server_side, Some(true));
        assert_eq!(p.self_heal_backoff_factor, Some(2));
        assert_eq!(p.ignore_normalizer_jq_timeout.as_deref(), Some("5s"));
        assert_eq!(p.resource_health_persist, Some(true));
        assert_eq!(p.appset_policy, Some(AppSetPolicy::CreateOnly));
        assert_eq!(p.appset_progressive_syncs, Some(true));
        assert_eq!(p.appset_new_git_file_globbing, Some(false));
        assert_eq!(p.include_hidden_directories, Some(true));
        assert_eq!(p.keys["server.insecure"], KeyClass::Kept);
        assert_eq!(p.keys["controller.log.level"], KeyClass::Kept);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
    }

    #[test]
    fn a_controller_policy_without_the_override_wins_over_the_appset() {
        let p = CmdParams::read(Some(&json!({"applicationsetcontroller.policy": "sync"})));
        assert!(!p.policy_override_enabled());
        assert_eq!(
            p.effective_appset_policy(Some(AppSetPolicy::CreateOnly)),
            AppSetPolicy::Sync
        );
        let p = CmdParams::read(Some(&json!({
            "applicationsetcontroller.policy": "create-update",
            "applicationsetcontroller.enable.policy.override": "True"
        })));
        assert_eq!(
            p.effective_appset_policy(Some(AppSetPolicy::CreateOnly)),
            AppSetPolicy::CreateOnly
        );
        assert_eq!(p.effective_appset_policy(None), AppSetPolicy::CreateUpdate);
        // No controller policy: the override is on by default.
        let p = CmdParams::read(Some(&json!({})));
        assert_eq!(
            p.effective_appset_policy(Some(AppSetPolicy::CreateOnly)),
            AppSetPolicy::CreateOnly
        );
    }

    #[test]
    fn malformed_values_and_wrong_keys_are_noted_with_pointers() {
        let p = CmdParams::read(Some(&json!({
            "controller.sync.timeout.seconds": "10m",
            "controller.diff.server.side": "yes",
            "controller.ignore.normalizer.jq.timeout": "5",
            "applicationsetcontroller.policy": "upsert",
            "timeout.reconciliation": "300s",
            "ignore.normalizer.jq.timeout": "5s",
            "controller.sync.timeout.second": "60",
            "replicas": 3
        })));
        let issue = |k: &str| {
            p.notes
                .iter()
                .find(|n| n.key == k)
                .map(|n| (n.issue, n.meant.clone()))
        };
        assert_eq!(
            issue("controller.sync.timeout.seconds").map(|i| i.0),
            Some(KeyIssue::Malformed)
        );
        assert_eq!(
            issue("controller.diff.server.side").map(|i| i.0),
            Some(KeyIssue::Malformed)
        );
        assert_eq!(
            issue("controller.ignore.normalizer.jq.timeout"),
            Some((KeyIssue::Malformed, Some("5s".into())))
        );
        assert_eq!(
            issue("applicationsetcontroller.policy").map(|i| i.0),
            Some(KeyIssue::Breaks)
        );
        assert_eq!(
            issue("timeout.reconciliation"),
            Some((
                KeyIssue::Misplaced,
                Some("timeout.reconciliation in argocd-cm".into())
            ))
        );
        assert_eq!(
            issue("ignore.normalizer.jq.timeout").map(|i| i.1),
            Some(Some("controller.ignore.normalizer.jq.timeout".into()))
        );
        assert_eq!(
            issue("controller.sync.timeout.second").map(|i| i.1),
            Some(Some("controller.sync.timeout.seconds".into()))
        );
        assert_eq!(p.keys["replicas"], KeyClass::Unknown);
        let n = p
            .notes
            .iter()
            .find(|n| n.key == "timeout.reconciliation")
            .unwrap();
        assert_eq!(n.pointer, "/data/timeout.reconciliation");
    }

    #[test]
    fn go_durations() {
        for ok in ["5s", "1m30s", "0", "1.5h", "300ms"] {
            assert!(is_go_duration(ok), "{ok}");
        }
        for bad in ["5", "", "s", "1d", "5 s"] {
            assert!(!is_go_duration(bad), "{bad}");
        }
    }
}
