//! Resource customizations of argocd-cm, as Argo CD keys its resource overrides
//! (`util/settings`: `GetResourceOverrides`, `appendResourceOverridesFromSplitKeys`,
//! `convertToOverrideKey`; `util/lua`: `GetConfigMapKey`):
//!
//! - the split keys `resource.customizations.<type>.<group_Kind>`: the key is cut at its first
//!   three dots, so `<type>` is the third part and everything after the third dot is the
//!   group and kind. That rest is split at `_`: two parts are `<group>/<Kind>`, one part is the
//!   bare kind (a core kind: Argo CD looks a core object up by its kind alone), `all` is `*/*`.
//!   A leading `_` (`_PersistentVolumeClaim`) gives the key `/PersistentVolumeClaim`, which no
//!   object is ever looked up by; more than one `_` is an error.
//! - the old block `resource.customizations`: YAML keyed by `<group>/<Kind>` (bare kind for a
//!   core kind) with `health.lua`, `health.lua.useOpenLibs`, `actions`, `ignoreDifferences`,
//!   `ignoreResourceUpdates` (YAML text) and `knownTypeFields`. Split keys override it per type.
//!
//! Argo CD loads all overrides or none: an unknown `<type>`, a malformed `<group_Kind>`, a
//! `useOpenLibs` that is not a boolean or a value that does not parse fails the whole load.

use serde::Serialize;
use serde_json::Value;

use super::{KeyIssue, KeyNote, YamlParser, closest, go_bool};
use crate::config::{Fields, Notes};

/// What a customization customizes (the `<type>` of a split key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum CustomizationType {
    /// A Lua health check.
    Health,
    /// Gives the health Lua the standard libraries.
    UseOpenLibs,
    /// Lua resource actions.
    Actions,
    /// System-level ignoreDifferences.
    IgnoreDifferences,
    /// Fields whose changes only refresh the cache.
    IgnoreResourceUpdates,
    /// Fields compared as a Kubernetes type.
    KnownTypeFields,
}

impl CustomizationType {
    /// Every type, as the split keys spell it.
    pub const NAMES: [&'static str; 6] = [
        "health",
        "useOpenLibs",
        "actions",
        "ignoreDifferences",
        "ignoreResourceUpdates",
        "knownTypeFields",
    ];

    /// The type a split key names (case-sensitive, as Argo CD matches it).
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "health" => Self::Health,
            "useOpenLibs" => Self::UseOpenLibs,
            "actions" => Self::Actions,
            "ignoreDifferences" => Self::IgnoreDifferences,
            "ignoreResourceUpdates" => Self::IgnoreResourceUpdates,
            "knownTypeFields" => Self::KnownTypeFields,
            _ => return None,
        })
    }
}

/// One resource customization.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Customization {
    /// What it customizes.
    #[serde(rename = "type")]
    pub kind_of: CustomizationType,
    /// Argo CD's override key: `apps/Deployment`, `Service` (a core kind), `*/*` (`all`), globs
    /// as written.
    pub override_key: String,
    /// The argocd-cm key it was read from.
    pub data_key: String,
    /// That key's JSON pointer.
    pub pointer: String,
    /// Read from the old `resource.customizations` block.
    pub in_block: bool,
    /// The value: Lua text (health, actions), a boolean (useOpenLibs), the parsed YAML
    /// (ignoreDifferences, ignoreResourceUpdates, knownTypeFields).
    pub value: Value,
}

impl Customization {
    /// (group, kind) of the override key: `Service` → (``, `Service`), `*/*` → (`*`, `*`).
    pub fn group_kind(&self) -> (&str, &str) {
        self.override_key
            .rsplit_once('/')
            .unwrap_or(("", &self.override_key))
    }

    /// True when some object can be matched by it: a key with an empty group (`/Kind`, from
    /// `_Kind`) is never looked up.
    pub fn reaches_objects(&self) -> bool {
        !self.override_key.starts_with('/')
    }

    /// True when Argo CD applies it to an object of `group`/`kind`: the object's key (its kind
    /// alone for a core kind, else `group/kind`) equals the override key or matches it as a glob.
    pub fn matches(&self, group: &str, kind: &str) -> bool {
        let subject = object_key(group, kind);
        self.override_key == subject || crate::config::glob::matches(&self.override_key, &subject)
    }
}

/// The key Argo CD looks an object's overrides up by (`GetConfigMapKey`).
pub fn object_key(group: &str, kind: &str) -> String {
    if group.is_empty() {
        kind.to_string()
    } else {
        format!("{group}/{kind}")
    }
}

/// Reads one split key `resource.customizations.<type>.<group_Kind>` (`key` starts with
/// `resource.customizations.`). Returns false when Argo CD does not read it at all.
pub(crate) fn read_split(
    key: &str,
    text: &str,
    parse: YamlParser<'_>,
    out: &mut Vec<Customization>,
    notes: &mut Vec<KeyNote>,
) -> bool {
    let parts: Vec<&str> = key.splitn(4, '.').collect();
    if parts.len() < 4 {
        notes.push(KeyNote::new(
            key,
            KeyIssue::Unknown,
            Some(format!("{key}.<group_Kind>")),
            "a customization key needs the group and kind after its type \
             (resource.customizations.<type>.<group_Kind>); Argo CD skips this one"
                .into(),
        ));
        return false;
    }
    let (type_name, group_kind) = (parts[2], parts[3]);
    let Some(kind_of) = CustomizationType::from_name(type_name) else {
        let meant = closest(type_name, CustomizationType::NAMES, 3)
            .map(|t| format!("resource.customizations.{t}.{group_kind}"))
            .unwrap_or_else(|| {
                format!(
                    "resource.customizations.<type>.{}",
                    key.trim_start_matches("resource.customizations.")
                )
            });
        notes.push(KeyNote::new(
            key,
            KeyIssue::Breaks,
            Some(meant),
            format!(
                "`{type_name}` is not a customization type (health, useOpenLibs, actions, \
                 ignoreDifferences, ignoreResourceUpdates, knownTypeFields): Argo CD fails to \
                 load every resource customization of argocd-cm"
            ),
        ));
        return false;
    };
    let override_key = match override_key(group_kind) {
        Ok(k) => k,
        Err(()) => {
            notes.push(KeyNote::new(
                key,
                KeyIssue::Breaks,
                None,
                format!(
                    "`{group_kind}` is not <group>_<Kind> or <Kind> (at most one `_`): Argo CD \
                     fails to load every resource customization of argocd-cm"
                ),
            ));
            return false;
        }
    };
    if let Some(kind) = override_key.strip_prefix('/') {
        notes.push(KeyNote::new(
            key,
            KeyIssue::NeverMatched,
            Some(format!("resource.customizations.{type_name}.{kind}")),
            format!(
                "a core kind's key is its bare kind: Argo CD keys this one `/{kind}`, which no \
                 object is looked up by, so it never applies"
            ),
        ));
    } else if kind_of == CustomizationType::Health
        && (group_kind == "lua" || group_kind.starts_with("lua."))
    {
        notes.push(KeyNote::new(
            key,
            KeyIssue::OtherRelease,
            Some("resource.customizations.health.<group_Kind>".into()),
            "`health.lua` is a field of the old resource.customizations block; as a split key \
             the Lua is the value of resource.customizations.health.<group_Kind>, and this key \
             names a kind `lua…` that no object has"
                .into(),
        ));
    } else if let Some((gk, suffix)) = group_kind.rsplit_once('.')
        && !gk.is_empty()
        && gk.contains('_')
        && !suffix.contains('_')
    {
        notes.push(KeyNote::new(
            key,
            KeyIssue::NeverMatched,
            Some(format!("resource.customizations.{type_name}.{gk}")),
            format!(
                "everything after the type is <group>_<Kind>: this key names the kind \
                 `{}`, which no object has",
                override_key.rsplit_once('/').map_or("", |(_, k)| k)
            ),
        ));
    }
    let value = match kind_of {
        CustomizationType::Health | CustomizationType::Actions => Value::String(text.into()),
        CustomizationType::UseOpenLibs => match go_bool(text.trim()) {
            Some(b) => Value::Bool(b),
            None => {
                notes.push(KeyNote::new(
                    key,
                    KeyIssue::Breaks,
                    Some("true".into()),
                    format!(
                        "`{text}` is not a boolean: Argo CD fails to load every resource \
                         customization of argocd-cm"
                    ),
                ));
                return false;
            }
        },
        CustomizationType::IgnoreDifferences | CustomizationType::IgnoreResourceUpdates => {
            match parse(text) {
                Ok(v @ (Value::Object(_) | Value::Null)) => {
                    note_ignore_fields(key, &v, notes);
                    v
                }
                Ok(_) => {
                    notes.push(breaks_on_value(key, "is not a YAML mapping"));
                    return false;
                }
                Err(e) => {
                    notes.push(breaks_on_value(key, &format!("is not valid YAML: {e}")));
                    return false;
                }
            }
        }
        CustomizationType::KnownTypeFields => match parse(text) {
            Ok(v @ (Value::Array(_) | Value::Null)) => v,
            Ok(_) => {
                notes.push(breaks_on_value(key, "is not a YAML list"));
                return false;
            }
            Err(e) => {
                notes.push(breaks_on_value(key, &format!("is not valid YAML: {e}")));
                return false;
            }
        },
    };
    out.push(Customization {
        kind_of,
        override_key,
        data_key: key.to_string(),
        pointer: super::data_pointer(key),
        in_block: false,
        value,
    });
    true
}

/// `convertToOverrideKey`, plus `all` → `*/*`.
fn override_key(group_kind: &str) -> Result<String, ()> {
    if group_kind == "all" {
        return Ok("*/*".into());
    }
    let parts: Vec<&str> = group_kind.split('_').collect();
    match parts.as_slice() {
        [group, kind] => Ok(format!("{group}/{kind}")),
        [kind] if !kind.is_empty() => Ok((*kind).to_string()),
        _ => Err(()),
    }
}

fn breaks_on_value(key: &str, what: &str) -> KeyNote {
    KeyNote::new(
        key,
        KeyIssue::Breaks,
        None,
        format!(
            "the value {what}: Argo CD fails to load every resource customization of argocd-cm"
        ),
    )
}

/// Fields of an ignoreDifferences value Argo CD does not read (`group:`/`kind:`/`name:` written
/// inside the value are ignored: the key says which kind).
fn note_ignore_fields(key: &str, v: &Value, notes: &mut Vec<KeyNote>) {
    let Some(map) = v.as_object() else { return };
    for field in map.keys() {
        if !["jsonPointers", "jqPathExpressions", "managedFieldsManagers"].contains(&field.as_str())
        {
            notes.push(KeyNote::new(
                key,
                KeyIssue::Unknown,
                None,
                format!(
                    "`{field}` inside the value is not read (only jsonPointers, \
                     jqPathExpressions and managedFieldsManagers are): the key alone says \
                     which kinds the paths apply to"
                ),
            ));
        }
    }
}

/// Reads the old block `resource.customizations`. Returns false when Argo CD fails on it.
pub(crate) fn read_block(
    key: &str,
    text: &str,
    parse: YamlParser<'_>,
    out: &mut Vec<Customization>,
    notes: &mut Vec<KeyNote>,
    problems: &mut Vec<String>,
) -> bool {
    let block = match parse(text) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Null) => return true,
        Ok(_) => {
            notes.push(breaks_on_value(key, "is not a YAML mapping"));
            problems.push(format!("`{key}` is not a YAML mapping"));
            return false;
        }
        Err(e) => {
            notes.push(breaks_on_value(key, &format!("is not valid YAML: {e}")));
            problems.push(format!("`{key}` is not valid YAML: {e}"));
            return false;
        }
    };
    let pointer = super::data_pointer(key);
    let mut ok = true;
    for (gk, entry) in &block {
        if !gk.contains('/')
            && let Some((group, kind)) = gk.rsplit_once('_')
        {
            notes.push(KeyNote::new(
                key,
                KeyIssue::OtherRelease,
                Some(format!("{group}/{kind}")),
                format!(
                    "`{gk}` in the resource.customizations block is a split key's \
                     <group>_<Kind>; the block is keyed <group>/<Kind>, so Argo CD reads it \
                     as a kind `{gk}` that no object has"
                ),
            ));
        }
        let mut fnotes = Notes::default();
        let mut f = Fields::of(Some(entry), "", &mut fnotes);
        let mut push = |kind_of, value: Value| {
            out.push(Customization {
                kind_of,
                override_key: gk.clone(),
                data_key: key.to_string(),
                pointer: pointer.clone(),
                in_block: true,
                value,
            })
        };
        if let Some(lua) = f.str("health.lua", &mut fnotes) {
            push(CustomizationType::Health, Value::String(lua.into()));
        }
        if let Some(b) = f.bool("health.lua.useOpenLibs", &mut fnotes) {
            push(CustomizationType::UseOpenLibs, Value::Bool(b));
        }
        if let Some(lua) = f.str("actions", &mut fnotes) {
            push(CustomizationType::Actions, Value::String(lua.into()));
        }
        for (field, kind_of) in [
            ("ignoreDifferences", CustomizationType::IgnoreDifferences),
            (
                "ignoreResourceUpdates",
                CustomizationType::IgnoreResourceUpdates,
            ),
        ] {
            match f.value(field) {
                None => {}
                Some(Value::String(text)) => match parse(text) {
                    Ok(v) => push(kind_of, v),
                    Err(e) => {
                        ok = false;
                        notes.push(breaks_on_value(
                            key,
                            &format!("of {gk} {field} is not valid YAML: {e}"),
                        ));
                        problems.push(format!("`{key}` is not valid YAML: {e}"));
                    }
                },
                Some(mapping) => {
                    // Argo CD wants YAML text here; a mapping fails the load. Kept for the
                    // rules, which read what was meant.
                    ok = false;
                    notes.push(breaks_on_value(
                        key,
                        &format!(
                            "of {gk} {field} is a mapping, not YAML text (write `{field}: |`)"
                        ),
                    ));
                    push(kind_of, mapping.clone());
                }
            }
        }
        if let Some(v) = f.value("knownTypeFields") {
            push(CustomizationType::KnownTypeFields, v.clone());
        }
        let meant_of = |field: &str| match field {
            "health" | "health.Lua" | "healthLua" | "lua" => Some("health.lua"),
            "useOpenLibs" | "health.useOpenLibs" => Some("health.lua.useOpenLibs"),
            "ignoreDifference" | "ignoredifferences" => Some("ignoreDifferences"),
            "ignoreResourceUpdate" => Some("ignoreResourceUpdates"),
            "action" => Some("actions"),
            _ => None,
        };
        f.finish(&mut fnotes);
        for unknown in &fnotes.unknown {
            let field = unknown
                .trim_start_matches('/')
                .replace("~1", "/")
                .replace("~0", "~");
            notes.push(KeyNote::new(
                key,
                KeyIssue::Unknown,
                meant_of(&field).map(|m| format!("{gk}: {m}")),
                format!("`{field}` of {gk} in the resource.customizations block is not read"),
            ));
        }
        for m in &fnotes.malformed {
            ok = false;
            let field = m.pointer.trim_start_matches('/');
            notes.push(breaks_on_value(
                key,
                &format!("of {gk} `{field}` is not a {}", m.expected),
            ));
        }
    }
    ok
}
