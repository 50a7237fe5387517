//! A generator's `selector`, as Argo CD 3.6.1 applies it to the parameter sets the generator made
//! (`applicationset/generators.Transform`): each set is flattened (`a.b.c`, list items as
//! `a.0`, every leaf printed as Go's `%v`) and kept when the label selector matches those
//! "labels". Unlike Kubernetes label selectors, values are not restricted in form (Argo CD
//! copies the selector parser without that check, so cluster URLs can be matched).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::generators::flatten;

/// The sets `selector` keeps (all of them when the generator names no selector; an empty
/// selector matches everything), or why the selector is not valid.
pub fn filter(selector: Option<&Value>, sets: Vec<Value>) -> Result<Vec<Value>, String> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(sets);
    };
    let requirements = parse(selector)?;
    Ok(sets
        .into_iter()
        .filter(|set| {
            let mut labels = Map::new();
            flatten("", set, &mut labels);
            requirements.iter().all(|r| r.matches(&labels))
        })
        .collect())
}

#[derive(Debug, PartialEq)]
enum Operator {
    In,
    NotIn,
    Exists,
    DoesNotExist,
}

#[derive(Debug)]
struct Requirement {
    key: String,
    operator: Operator,
    values: BTreeSet<String>,
}

impl Requirement {
    fn matches(&self, labels: &Map<String, Value>) -> bool {
        let value = labels.get(&self.key).and_then(Value::as_str);
        match self.operator {
            Operator::In => value.is_some_and(|v| self.values.contains(v)),
            Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
        }
    }
}

fn parse(selector: &Value) -> Result<Vec<Requirement>, String> {
    let mut out = Vec::new();
    if let Some(labels) = selector.get("matchLabels").filter(|v| !v.is_null()) {
        let labels = labels
            .as_object()
            .ok_or("selector.matchLabels is not a map")?;
        for (key, value) in labels {
            let value = value
                .as_str()
                .ok_or_else(|| format!("selector.matchLabels.{key} is not a string"))?;
            out.push(Requirement {
                key: key.clone(),
                operator: Operator::In,
                values: BTreeSet::from([value.to_string()]),
            });
        }
    }
    for (n, expression) in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("selector.matchExpressions[{n}]");
        let key = expression
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .ok_or_else(|| format!("{at}: no key"))?;
        let values: BTreeSet<String> = expression
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| format!("{at}: a value is not a string"))
            })
            .collect::<Result<_, _>>()?;
        let operator = match expression.get("operator").and_then(Value::as_str) {
            Some("In") => Operator::In,
            Some("NotIn") => Operator::NotIn,
            Some("Exists") => Operator::Exists,
            Some("DoesNotExist") => Operator::DoesNotExist,
            other => {
                return Err(format!(
                    "{at}: {:?} is not a valid label selector operator",
                    other.unwrap_or_default()
                ));
            }
        };
        let needs_values = matches!(operator, Operator::In | Operator::NotIn);
        if needs_values && values.is_empty() {
            return Err(format!(
                "{at}: for 'in', 'notin' operators, values set can't be empty"
            ));
        }
        if !needs_values && !values.is_empty() {
            return Err(format!(
                "{at}: values set must be empty for exists and does not exist"
            ));
        }
        out.push(Requirement {
            key: key.to_string(),
            operator,
            values,
        });
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sets() -> Vec<Value> {
        vec![
            json!({"name": "prod", "server": "https://prod.example.com:6443", "values.tier": "gold"}),
            json!({"name": "dev", "server": "https://dev.example.com:6443"}),
            json!({"path": {"basename": "web", "segments": ["apps", "web"]}, "replicas": 3}),
        ]
    }

    fn names(kept: &[Value]) -> Vec<String> {
        kept.iter()
            .map(|s| {
                s.get("name")
                    .or_else(|| s.pointer("/path/basename"))
                    .and_then(Value::as_str)
                    .unwrap()
                    .to_string()
            })
            .collect()
    }

    fn kept(selector: Value) -> Vec<String> {
        names(&filter(Some(&selector), sets()).unwrap())
    }

    #[test]
    fn no_selector_keeps_every_set_and_an_empty_one_matches_all() {
        assert_eq!(names(&filter(None, sets()).unwrap()).len(), 3);
        assert_eq!(kept(json!({})).len(), 3);
    }

    #[test]
    fn match_labels_compare_flattened_parameters_and_urls_are_allowed() {
        assert_eq!(
            kept(json!({"matchLabels": {"server": "https://prod.example.com:6443"}})),
            ["prod"]
        );
        assert_eq!(
            kept(json!({"matchLabels": {"values.tier": "gold"}})),
            ["prod"]
        );
        // Nested objects and lists are flattened, numbers printed as Go prints them.
        assert_eq!(
            kept(json!({"matchLabels": {"path.segments.1": "web", "replicas": "3"}})),
            ["web"]
        );
    }

    #[test]
    fn expressions_follow_kubernetes_semantics() {
        let expr = |op: &str, values: Value| {
            kept(json!({"matchExpressions": [{"key": "name", "operator": op, "values": values}]}))
        };
        assert_eq!(expr("In", json!(["dev", "qa"])), ["dev"]);
        // NotIn and DoesNotExist keep sets without the key.
        assert_eq!(expr("NotIn", json!(["dev"])), ["prod", "web"]);
        assert_eq!(expr("Exists", json!([])), ["prod", "dev"]);
        assert_eq!(expr("DoesNotExist", json!(null)), ["web"]);
        // Requirements are ANDed.
        assert_eq!(
            kept(json!({
                "matchLabels": {"name": "prod"},
                "matchExpressions": [{"key": "values.tier", "operator": "NotIn", "values": ["gold"]}]
            })),
            Vec::<String>::new()
        );
    }

    #[test]
    fn invalid_selectors_are_errors() {
        let err = |s: Value| filter(Some(&s), sets()).unwrap_err();
        assert!(
            err(json!({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]}))
                .contains("not a valid label selector operator")
        );
        assert!(
            err(json!({"matchExpressions": [{"key": "a", "operator": "In"}]}))
                .contains("can't be empty")
        );
        assert!(
            err(json!({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]}))
                .contains("must be empty")
        );
        assert!(err(json!({"matchLabels": {"a": 1}})).contains("not a string"));
    }
}
