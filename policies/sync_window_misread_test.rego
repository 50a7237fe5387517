# Tests for SG620 (policies/sync_window_misread.rego). input.project.sync_windows is mocked as
# src/evaluate/project.rs builds it.
package syncguard.rules.sync_window_misread_test

import data.syncguard.rules.sync_window_misread as rule

project := {
	"apiVersion": "argoproj.io/v1alpha1",
	"kind": "AppProject",
	"metadata": {"name": "team-a", "namespace": "argocd"},
	"spec": {},
}

# A valid deny window for applications ['*'], with `overrides`.
window(overrides) := object.union(
	{
		"index": 0,
		"kind": "deny",
		"kind_valid": true,
		"schedule": "0 22 * * *",
		"schedule_error": null,
		"never_fires": false,
		"duration": "8h",
		"duration_error": null,
		"never_open": false,
		"time_zone": "",
		"time_zone_unknown": false,
		"time_zone_read": true,
		"applications": ["*"],
		"namespaces": [],
		"clusters": [],
		"targets_nothing": false,
		"manual_sync": false,
		"and_operator": false,
		"and_in_force": false,
		"covers_every_application": true,
		"match_all_lists": ["applications"],
		"defeated_lists": [],
	},
	overrides,
)

review(windows, release) := {
	"operation": "CHECK",
	"resource": project,
	"project": {"sync_windows": windows},
	"argocd": {"version": sprintf("%d.%d.0", [floor(release / 100), release % 100]), "release": release},
}

test_a_valid_window_for_the_whole_project_is_silent if {
	count(rule.violations) == 0 with input as review([window({})], 300)
}

test_an_unparsable_schedule_denies_with_a_hint if {
	v := rule.violations with input as review([window({"schedule": "0 22 * * 7", "schedule_error": "end of range (7) above maximum (6): 7"})], 300)
	v == {{
		"msg": "AppProject team-a: sync window 0 (deny \"0 22 * * 7\" for 8h) has schedule \"0 22 * * 7\", which Argo CD cannot parse (end of range (7) above maximum (6): 7); day-of-week runs 0-6 (Sunday is 0, or sun): 7 is refused. Argo CD's API refuses such a project; applied as a manifest it is stored, and every Application the window matches never syncs again: the controller's window check fails with \"invalid sync windows: cannot parse schedule\", for automated and manual syncs alike. Fix the field; `argocd proj windows add` checks it as Argo CD will.",
		"path": "/spec/syncWindows/0/schedule",
		"severity": "high",
		"action": "deny",
	}}
}

test_a_descriptor_schedule_is_named if {
	v := rule.violations with input as review([window({"schedule": "@daily", "schedule_error": "parser does not accept descriptors: @daily"})], 300)
	count(v) == 1
	some f in v
	contains(f.msg, "takes no @ descriptors")
}

test_a_day_duration_denies if {
	v := rule.violations with input as review([window({"index": 2, "duration": "1d", "duration_error": "time: unknown unit \"d\" in duration \"1d\""})], 300)
	count(v) == 1
	some f in v
	f.path == "/spec/syncWindows/2/duration"
	f.action == "deny"
	contains(f.msg, "write 24h for a day")
}

test_a_deny_window_that_never_fires_is_always_open if {
	v := rule.violations with input as review([window({"schedule": "0 0 30 2 *", "never_fires": true})], 300)
	count(v) == 1
	some f in v
	f.severity == "high"
	f.action == "deny"
	contains(f.msg, "every sync of the Applications it matches is refused, for good")
}

test_a_never_firing_deny_window_with_manual_sync_warns if {
	v := rule.violations with input as review([window({"schedule": "0 0 30 2 *", "never_fires": true, "manual_sync": true})], 300)
	some f in v
	f.action == "warn"
}

test_a_zero_duration_is_never_open if {
	v := rule.violations with input as review([window({"kind": "allow", "duration": "0s", "never_open": true})], 300)
	count(v) == 1
	some f in v
	f.severity == "medium"
	contains(f.msg, "their syncs are refused unless another allow window is open")
}

test_an_unknown_kind_does_nothing if {
	v := rule.violations with input as review([window({"kind": "Deny", "kind_valid": false})], 300)
	count(v) == 1
	some f in v
	f.path == "/spec/syncWindows/0/kind"
	contains(f.msg, "Write kind: deny.")
}

test_an_unknown_time_zone_runs_in_utc if {
	v := rule.violations with input as review([window({"time_zone": "CEST", "time_zone_unknown": true})], 300)
	count(v) == 1
	some f in v
	f.path == "/spec/syncWindows/0/timeZone"
	contains(f.msg, "runs the window in UTC")
}

test_a_time_zone_before_2_2_is_ignored if {
	v := rule.violations with input as review([window({"time_zone": "Europe/Berlin", "time_zone_read": false})], 201)
	count(v) == 1
	some f in v
	contains(f.msg, "only from 2.2.0")
	# UTC needs no zone: silent.
	count(rule.violations) == 0 with input as review([window({"time_zone": "UTC", "time_zone_read": false})], 201)
}

ored := {
	"namespaces": ["prod"],
	"defeated_lists": ["namespaces"],
}

test_a_wildcard_next_to_a_filter_covers_every_application if {
	v := rule.violations with input as review([window(ored)], 300)
	v == {{
		"msg": "AppProject team-a: sync window 0 (deny \"0 22 * * *\" for 8h) lists applications: [*] and namespaces: [prod], but Argo CD ORs a window's match lists: applications: [*] matches every Application, so the window applies to every Application of the project, not only to those its namespaces select. Set andOperator: true (Argo CD 3.0+) so that every list must match, or drop the wildcard.",
		"path": "/spec/syncWindows/0",
		"severity": "medium",
	}}
}

test_before_3_0_the_fix_is_to_drop_the_wildcard if {
	v := rule.violations with input as review([window(object.union(ored, {"and_operator": true}))], 214)
	count(v) == 1
	some f in v
	contains(f.msg, "(andOperator: true is read only from Argo CD 3.0.0)")
	contains(f.msg, "Upgrade Argo CD to 3.0")
}

test_and_operator_before_3_0_without_wildcard if {
	w := window({
		"applications": ["shop"], "namespaces": ["prod"], "and_operator": true,
		"covers_every_application": false, "match_all_lists": [],
	})
	v := rule.violations with input as review([w], 214)
	count(v) == 1
	some f in v
	f.path == "/spec/syncWindows/0/andOperator"
	# From 3.0 it is read: silent.
	count(rule.violations) == 0 with input as review([object.union(w, {"and_in_force": true})], 300)
}

test_a_window_without_lists_applies_to_nothing if {
	w := window({"applications": [], "targets_nothing": true, "covers_every_application": false, "match_all_lists": []})
	v := rule.violations with input as review([w], 300)
	count(v) == 1
	some f in v
	f.severity == "low"
}

test_only_app_projects_and_never_on_delete if {
	bad := [window({"schedule_error": "x"})]
	count(rule.violations) == 0 with input as object.union(review(bad, 300), {"operation": "DELETE"})
	count(rule.violations) == 0 with input as object.union(review(bad, 300), {"resource": {"kind": "Application"}})
}
