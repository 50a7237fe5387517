//! `policies/config.yaml`: action overrides, namespace overrides, exemptions and patch defaults.
//!
//! The schema is fixed by `policies/config.yaml` itself (every key optional, the file documents
//! the defaults). Parsing is strict on purpose: a typo such as `exempt_namespace:` or
//! `SG103: block` would otherwise silently weaken enforcement, so every unknown key, wrong type or
//! unknown action is an error that names `file:line`.
//!
//! The validated configuration is handed to Rego as `data.syncguard.config` with every default
//! filled in ([`Config::to_data`]), so rules can read `data.syncguard.config.defaults.*` without
//! guarding against missing keys.

use std::collections::BTreeMap;
use std::fmt;

use saphyr::{LoadableYamlNode, MarkedYaml, Scalar, YamlData};
use serde_json::{Map, Number, Value, json};

use crate::finding::{Action, RuleId};
use crate::model::version::{ArgoCdVersion, VersionError};

/// Default for `annotation_exemptions`.
pub const DEFAULT_ANNOTATION_EXEMPTIONS: bool = true;
/// Default for `exempt_namespaces`: the control plane's own namespace is never judged.
pub const DEFAULT_EXEMPT_NAMESPACES: &[&str] = &["kube-system"];
/// Defaults for `defaults`, filled in when a key is missing. They are floors: mutating rules
/// never lower a larger existing value (see [`crate::mutate`]).
pub const DEFAULT_PATCH_VALUES: &[(&str, i64)] = &[
    // SG101: 15 minutes, then Kubernetes fails the hook Job and Argo CD moves on (seed 000 stalled
    // for 40 minutes with no deadline).
    ("hook_job_active_deadline_seconds", 900),
    // SG102: two retries instead of Kubernetes' six with growing back-off.
    ("hook_job_backoff_limit", 2),
    // SG104: same reasoning as SG101, for bare hook Pods.
    ("hook_pod_active_deadline_seconds", 900),
];

/// A configuration problem, with the line it was found on when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based line in `config.yaml`, when the problem has a position.
    pub line: Option<usize>,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A namespace pattern: an exact name, or a prefix followed by a single trailing `*`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum NamespacePattern {
    /// Matches one namespace.
    Exact(String),
    /// Matches every namespace starting with the prefix (`legacy-*`; `*` alone matches all).
    Prefix(String),
}

impl NamespacePattern {
    /// Parses `name` or `prefix*`; a `*` anywhere else is rejected so that `*-prod` is not
    /// mistaken for a glob that silently matches nothing.
    pub fn parse(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("a namespace pattern cannot be empty".into());
        }
        match s.find('*') {
            None => Ok(NamespacePattern::Exact(s.to_string())),
            Some(i) if i == s.len() - 1 => Ok(NamespacePattern::Prefix(s[..i].to_string())),
            Some(_) => Err(format!(
                "namespace pattern `{s}`: `*` is only allowed at the end (a prefix match)"
            )),
        }
    }

    /// True if the pattern matches the namespace.
    pub fn matches(&self, namespace: &str) -> bool {
        match self {
            NamespacePattern::Exact(n) => n == namespace,
            NamespacePattern::Prefix(p) => namespace.starts_with(p.as_str()),
        }
    }

    /// Higher is more specific: any exact name beats any prefix, a longer prefix beats a shorter.
    fn specificity(&self) -> (u8, usize) {
        match self {
            NamespacePattern::Exact(n) => (1, n.len()),
            NamespacePattern::Prefix(p) => (0, p.len()),
        }
    }
}

impl fmt::Display for NamespacePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NamespacePattern::Exact(n) => f.write_str(n),
            NamespacePattern::Prefix(p) => write!(f, "{p}*"),
        }
    }
}

/// Rule ID → action overrides.
pub type ActionMap = BTreeMap<RuleId, Action>;

/// The validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Honour `syncguard.dev/skip` annotations (with a mandatory reason).
    pub annotation_exemptions: bool,
    /// Per-rule action overrides.
    pub actions: BTreeMap<RuleId, Action>,
    /// Per-namespace-pattern action overrides, in file order.
    pub namespaces: Vec<(NamespacePattern, ActionMap)>,
    /// Namespaces never judged (findings recorded as skipped).
    pub exempt_namespaces: Vec<NamespacePattern>,
    /// Values mutating rules inject, defaults filled in. Free-form beyond the known keys so new
    /// rules can add their own without a schema change.
    pub defaults: Map<String, Value>,
    /// `argocd_version`: the Argo CD release the rules judge for, unless `--argocd-version`
    /// says otherwise (`None`: the newest syncguard knows).
    pub argocd_version: Option<ArgoCdVersion>,
    /// Line of each rule ID mentioned in `actions`/`namespaces`, to point at unknown IDs later.
    rule_lines: Vec<(RuleId, usize)>,
}

impl Default for Config {
    fn default() -> Self {
        let mut defaults = Map::new();
        fill_default_patch_values(&mut defaults);
        Self {
            annotation_exemptions: DEFAULT_ANNOTATION_EXEMPTIONS,
            actions: BTreeMap::new(),
            namespaces: Vec::new(),
            exempt_namespaces: DEFAULT_EXEMPT_NAMESPACES
                .iter()
                .map(|n| NamespacePattern::Exact((*n).to_string()))
                .collect(),
            defaults,
            argocd_version: None,
            rule_lines: Vec::new(),
        }
    }
}

impl Config {
    /// Parses and validates `config.yaml` text. An empty file (or only comments) is the default
    /// configuration.
    pub fn parse(text: &str) -> Result<Self, ConfigError> {
        let docs = MarkedYaml::load_from_str(text).map_err(|e| ConfigError {
            line: Some(e.marker().line()),
            message: format!("invalid YAML: {}", e.info()),
        })?;
        let root = match docs.as_slice() {
            [] => return Ok(Self::default()),
            [root] => root,
            [_, second, ..] => {
                return Err(ConfigError {
                    line: Some(second.span.start.line()),
                    message: "config.yaml must hold a single YAML document".into(),
                });
            }
        };
        if matches!(root.data, YamlData::Value(Scalar::Null)) {
            return Ok(Self::default());
        }
        let mut config = Self::default();
        for (key, value) in mapping(root, "the top level of config.yaml")? {
            match key_str(key)? {
                "annotation_exemptions" => {
                    config.annotation_exemptions = boolean(value, "annotation_exemptions")?;
                }
                "actions" => {
                    config.actions = action_map(value, "actions", &mut config.rule_lines)?;
                }
                "namespaces" => config.namespaces = namespaces(value, &mut config.rule_lines)?,
                "exempt_namespaces" => {
                    config.exempt_namespaces = sequence(value, "exempt_namespaces")?
                        .iter()
                        .map(|item| {
                            let s = string(item, "an exempt_namespaces entry")?;
                            NamespacePattern::parse(s).map_err(|message| at(item, message))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "defaults" => config.defaults = defaults(value)?,
                "argocd_version" => {
                    let text = match &value.data {
                        YamlData::Value(Scalar::String(s)) => s.to_string(),
                        _ => {
                            return Err(at(
                                value,
                                "argocd_version must be a quoted version such as \"3.2\" \
                                 (unquoted, 3.10 would read as the number 3.1)",
                            ));
                        }
                    };
                    config.argocd_version = Some(
                        text.parse()
                            .map_err(|e: VersionError| at(value, e.to_string()))?,
                    );
                }
                other => {
                    return Err(at(
                        key,
                        format!(
                            "unknown key `{other}` (expected annotation_exemptions, actions, \
                             namespaces, exempt_namespaces, defaults, argocd_version)"
                        ),
                    ));
                }
            }
        }
        Ok(config)
    }

    /// The effective action of a rule for an object in `namespace` (`None` = cluster-scoped or
    /// unknown): the most specific namespace pattern that sets an action for this rule (exact
    /// name before prefix, longer prefix before shorter), else the `actions` override, else the
    /// rule's own `meta.action`. Patterns that do not mention the rule are skipped, so a broad
    /// `legacy-*` override and a narrow `legacy-billing` override compose.
    pub fn action_for(&self, rule: &RuleId, namespace: Option<&str>, default: Action) -> Action {
        if let Some(ns) = namespace {
            let best = self
                .namespaces
                .iter()
                .filter(|(pattern, _)| pattern.matches(ns))
                .filter_map(|(pattern, actions)| actions.get(rule).map(|a| (pattern, *a)))
                .max_by_key(|(pattern, _)| pattern.specificity());
            if let Some((_, action)) = best {
                return action;
            }
        }
        self.actions.get(rule).copied().unwrap_or(default)
    }

    /// The `exempt_namespaces` pattern that exempts `namespace`, if any.
    pub fn exemption_for(&self, namespace: Option<&str>) -> Option<&NamespacePattern> {
        let ns = namespace?;
        self.exempt_namespaces.iter().find(|p| p.matches(ns))
    }

    /// Every rule ID that `actions` and `namespaces` mention, with its line.
    pub fn mentioned_rules(&self) -> impl Iterator<Item = (&RuleId, usize)> {
        self.rule_lines.iter().map(|(id, line)| (id, *line))
    }

    /// The document rules see as `data.syncguard.config`, with every default filled in.
    pub fn to_data(&self) -> Value {
        let actions = |m: &BTreeMap<RuleId, Action>| -> Value {
            m.iter()
                .map(|(id, a)| (id.to_string(), Value::from(a.as_str())))
                .collect::<Map<_, _>>()
                .into()
        };
        let namespaces: Map<String, Value> = self
            .namespaces
            .iter()
            .map(|(p, a)| (p.to_string(), json!({ "actions": actions(a) })))
            .collect();
        json!({
            "annotation_exemptions": self.annotation_exemptions,
            "actions": actions(&self.actions),
            "namespaces": namespaces,
            "exempt_namespaces": self.exempt_namespaces.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
            "defaults": self.defaults,
        })
    }
}

fn fill_default_patch_values(defaults: &mut Map<String, Value>) {
    for (key, value) in DEFAULT_PATCH_VALUES {
        defaults
            .entry((*key).to_string())
            .or_insert_with(|| Value::from(*value));
    }
}

type Entries<'a, 'i> = Vec<(&'a MarkedYaml<'i>, &'a MarkedYaml<'i>)>;

fn at(node: &MarkedYaml<'_>, message: impl Into<String>) -> ConfigError {
    ConfigError {
        line: Some(node.span.start.line()),
        message: message.into(),
    }
}

fn kind_of(node: &MarkedYaml<'_>) -> &'static str {
    match &node.data {
        YamlData::Mapping(_) => "a mapping",
        YamlData::Sequence(_) => "a list",
        YamlData::Value(Scalar::String(_)) => "a string",
        YamlData::Value(Scalar::Integer(_)) => "an integer",
        YamlData::Value(Scalar::FloatingPoint(_)) => "a number",
        YamlData::Value(Scalar::Boolean(_)) => "a boolean",
        YamlData::Value(Scalar::Null) => "null",
        _ => "an unsupported YAML node",
    }
}

fn mapping<'a, 'i>(node: &'a MarkedYaml<'i>, what: &str) -> Result<Entries<'a, 'i>, ConfigError> {
    match &node.data {
        YamlData::Mapping(m) => Ok(m.iter().collect()),
        // `actions:` with nothing after it is an empty mapping, not an error.
        YamlData::Value(Scalar::Null) => Ok(Vec::new()),
        _ => Err(at(
            node,
            format!("{what} must be a mapping, found {}", kind_of(node)),
        )),
    }
}

fn sequence<'a, 'i>(
    node: &'a MarkedYaml<'i>,
    what: &str,
) -> Result<Vec<&'a MarkedYaml<'i>>, ConfigError> {
    match &node.data {
        YamlData::Sequence(s) => Ok(s.iter().collect()),
        YamlData::Value(Scalar::Null) => Ok(Vec::new()),
        _ => Err(at(
            node,
            format!("{what} must be a list, found {}", kind_of(node)),
        )),
    }
}

fn string<'a>(node: &'a MarkedYaml<'_>, what: &str) -> Result<&'a str, ConfigError> {
    match &node.data {
        YamlData::Value(Scalar::String(s)) => Ok(s.as_ref()),
        _ => Err(at(
            node,
            format!("{what} must be a string, found {}", kind_of(node)),
        )),
    }
}

fn key_str<'a>(node: &'a MarkedYaml<'_>) -> Result<&'a str, ConfigError> {
    string(node, "a key")
}

fn boolean(node: &MarkedYaml<'_>, what: &str) -> Result<bool, ConfigError> {
    match &node.data {
        YamlData::Value(Scalar::Boolean(b)) => Ok(*b),
        _ => Err(at(
            node,
            format!("{what} must be true or false, found {}", kind_of(node)),
        )),
    }
}

fn rule_id(node: &MarkedYaml<'_>) -> Result<RuleId, ConfigError> {
    let s = string(node, "a rule ID")?;
    if s.is_empty()
        || !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        return Err(at(
            node,
            format!("`{s}` is not a rule ID (letters, digits, `-` and `_`, e.g. SG101)"),
        ));
    }
    Ok(RuleId::new(s))
}

fn action_map(
    node: &MarkedYaml<'_>,
    what: &str,
    lines: &mut Vec<(RuleId, usize)>,
) -> Result<BTreeMap<RuleId, Action>, ConfigError> {
    let mut out = BTreeMap::new();
    for (key, value) in mapping(node, what)? {
        let id = rule_id(key)?;
        let action = string(value, &format!("the action of {id}"))?
            .parse::<Action>()
            .map_err(|e| at(value, format!("{what}.{id}: {e}")))?;
        lines.push((id.clone(), key.span.start.line()));
        out.insert(id, action);
    }
    Ok(out)
}

fn namespaces(
    node: &MarkedYaml<'_>,
    lines: &mut Vec<(RuleId, usize)>,
) -> Result<Vec<(NamespacePattern, ActionMap)>, ConfigError> {
    let mut out: Vec<(NamespacePattern, ActionMap)> = Vec::new();
    for (key, value) in mapping(node, "namespaces")? {
        let raw = key_str(key)?;
        let pattern = NamespacePattern::parse(raw).map_err(|message| at(key, message))?;
        let mut actions = BTreeMap::new();
        for (k, v) in mapping(value, &format!("namespaces.{raw}"))? {
            match key_str(k)? {
                "actions" => actions = action_map(v, &format!("namespaces.{raw}.actions"), lines)?,
                other => {
                    return Err(at(
                        k,
                        format!("unknown key `{other}` under namespaces.{raw} (expected actions)"),
                    ));
                }
            }
        }
        out.push((pattern, actions));
    }
    Ok(out)
}

fn defaults(node: &MarkedYaml<'_>) -> Result<Map<String, Value>, ConfigError> {
    let mut out = Map::new();
    for (key, value) in mapping(node, "defaults")? {
        let name = key_str(key)?;
        let v = scalar_json(value, &format!("defaults.{name}"))?;
        let known = DEFAULT_PATCH_VALUES.iter().any(|(k, _)| *k == name);
        if known && v.as_i64().is_none_or(|n| n < 0) {
            return Err(at(
                value,
                format!("defaults.{name} must be a non-negative integer"),
            ));
        }
        out.insert(name.to_string(), v);
    }
    fill_default_patch_values(&mut out);
    Ok(out)
}

fn scalar_json(node: &MarkedYaml<'_>, what: &str) -> Result<Value, ConfigError> {
    Ok(match &node.data {
        YamlData::Value(Scalar::Null) => Value::Null,
        YamlData::Value(Scalar::Boolean(b)) => Value::Bool(*b),
        YamlData::Value(Scalar::Integer(i)) => Value::from(*i),
        YamlData::Value(Scalar::FloatingPoint(f)) => Number::from_f64(f.into_inner())
            .map(Value::Number)
            .ok_or_else(|| at(node, format!("{what} must be a finite number")))?,
        YamlData::Value(Scalar::String(s)) => Value::from(s.as_ref()),
        _ => {
            return Err(at(
                node,
                format!("{what} must be a scalar, found {}", kind_of(node)),
            ));
        }
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn argocd_version_is_read_quoted_and_refused_with_its_line_otherwise() {
        let c = Config::parse("argocd_version: \"v3.2.11\"\n").unwrap();
        assert_eq!(
            c.argocd_version.map(|v| v.to_string()),
            Some("3.2.11".into())
        );
        assert_eq!(Config::default().argocd_version, None);
        let float = Config::parse("actions: {}\nargocd_version: 3.10\n").unwrap_err();
        assert_eq!(float.line, Some(2));
        assert!(
            float.message.contains("quoted version"),
            "{}",
            float.message
        );
        let bad = Config::parse("argocd_version: \"three\"\n").unwrap_err();
        assert!(
            bad.message.contains("is not an Argo CD version"),
            "{}",
            bad.message
        );
    }

    fn id(s: &str) -> RuleId {
        RuleId::from(s)
    }

    #[test]
    fn the_shipped_config_file_parses_to_the_defaults() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("policies/config.yaml"),
        )
        .unwrap();
        assert_eq!(Config::parse(&text).unwrap(), Config::default());
        assert_eq!(Config::parse("").unwrap(), Config::default());
        assert_eq!(Config::parse("# nothing\n").unwrap(), Config::default());
    }

    #[test]
    fn missing_defaults_are_filled_and_extra_defaults_kept() {
        let c =
            Config::parse("defaults:\n  hook_job_backoff_limit: 4\n  my_rule_limit: 7\n").unwrap();
        let data = c.to_data();
        assert_eq!(data["defaults"]["hook_job_backoff_limit"], 4);
        assert_eq!(data["defaults"]["hook_job_active_deadline_seconds"], 900);
        assert_eq!(data["defaults"]["my_rule_limit"], 7);
        assert_eq!(data["exempt_namespaces"], json!(["kube-system"]));
    }

    #[test]
    fn unknown_keys_wrong_types_and_unknown_actions_name_the_line() {
        let err = Config::parse("actions:\n  SG101: warn\nexempt_namespace:\n  - x\n").unwrap_err();
        assert_eq!(err.line, Some(3));
        assert!(
            err.message.contains("unknown key `exempt_namespace`"),
            "{err}"
        );

        let err = Config::parse("actions:\n  SG103: block\n").unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("unknown action `block`"), "{err}");

        let err = Config::parse("annotation_exemptions: \"yes\"\n").unwrap_err();
        assert!(err.message.contains("must be true or false"), "{err}");

        let err = Config::parse("defaults:\n  hook_job_backoff_limit: -1\n").unwrap_err();
        assert_eq!(err.line, Some(2));

        let err = Config::parse("namespaces:\n  '*-prod':\n    actions: {}\n").unwrap_err();
        assert!(err.message.contains("only allowed at the end"), "{err}");

        let err = Config::parse("actions: [SG101]\n").unwrap_err();
        assert!(
            err.message
                .contains("actions must be a mapping, found a list"),
            "{err}"
        );

        let err = Config::parse("actions: {\n").unwrap_err();
        assert!(err.message.starts_with("invalid YAML"), "{err}");
    }

    #[test]
    fn namespace_overrides_prefer_exact_names_then_longer_prefixes() {
        let c = Config::parse(
            "actions:\n  SG101: audit\n\
             namespaces:\n\
             \x20 legacy-*:\n    actions:\n      SG101: warn\n      SG102: warn\n\
             \x20 legacy-billing-*:\n    actions:\n      SG101: deny\n\
             \x20 legacy-billing-eu:\n    actions:\n      SG101: off\n",
        )
        .unwrap();
        let a = |ns: Option<&str>, rule: &str| c.action_for(&id(rule), ns, Action::Mutate);
        assert_eq!(a(Some("legacy-billing-eu"), "SG101"), Action::Off);
        assert_eq!(a(Some("legacy-billing-us"), "SG101"), Action::Deny);
        assert_eq!(a(Some("legacy-shop"), "SG101"), Action::Warn);
        // The narrower patterns do not mention SG102, so the broader one still applies.
        assert_eq!(a(Some("legacy-billing-eu"), "SG102"), Action::Warn);
        assert_eq!(a(Some("shop"), "SG101"), Action::Audit);
        assert_eq!(a(None, "SG101"), Action::Audit);
        assert_eq!(a(Some("shop"), "SG999"), Action::Mutate);
    }

    #[test]
    fn exempt_namespaces_accept_prefix_patterns() {
        let c = Config::parse("exempt_namespaces: [kube-system, 'sandbox-*']\n").unwrap();
        assert_eq!(
            c.exemption_for(Some("sandbox-alice"))
                .map(|p| p.to_string()),
            Some("sandbox-*".to_string())
        );
        assert!(c.exemption_for(Some("kube-public")).is_none());
        assert!(c.exemption_for(None).is_none());
        let none = Config::parse("exempt_namespaces: []\n").unwrap();
        assert!(none.exemption_for(Some("kube-system")).is_none());
    }
}
