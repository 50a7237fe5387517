# SG620: a sync window Argo CD refuses or reads differently from what it says.
#
# Facts: input.project.sync_windows (src/evaluate/project.rs), computed by the semantics crate
# (crates/syncguard-argocd/src/config/sync_window.rs) as Argo CD's types.go reads a window:
# robfig/cron v3 with cron.Minute|Hour|Dom|Month|Dow (five fields, no descriptors, day-of-week
# 0-6), Go's time.ParseDuration and time.LoadLocation, SyncWindows.Matches and CanSync.
#
# Findings, one per window and problem:
#  1. schedule or duration Argo CD cannot parse. argocd proj windows / the API refuse the project
#     (SyncWindow.Validate via AppProject.ValidateProject); applied as a manifest it is stored,
#     and every Application the window matches never syncs again: CanSync fails with "invalid
#     sync windows: cannot parse ...", automated and manual syncs alike. high, deny.
#  2. a schedule that never fires (0 0 30 2 *): robfig/cron returns Go's zero time, which Argo CD
#     reads as "opened long ago", so the window is open all the time. A deny window then refuses
#     every sync of the Applications it matches (high; deny without manualSync).
#  3. a zero or negative duration: the window never opens.
#  4. a kind other than allow/deny: the controller neither denies nor allows with it.
#  5. an unknown timeZone (2.2+): Argo CD logs a warning and runs the window in UTC; before 2.2
#     the field does not exist and every window runs in UTC.
#  6. a window whose ORed match lists cover every Application (applications: ['*'] next to a
#     narrower namespaces: list meant as a filter), and andOperator: true before 3.0 (ignored).
#  7. a window with no applications, namespaces or clusters: it applies to nothing.
package syncguard.rules.sync_window_misread

meta := {
	"id": "SG620",
	"title": "Sync window that Argo CD refuses or reads differently",
	"severity": "high",
	"action": "warn",
	"why": concat(" ", [
		"A sync window whose schedule or duration Argo CD cannot parse stops every sync of the",
		"Applications it matches; other windows silently run in UTC, never open, are always open,",
		"or apply to every Application of the project because their match lists are ORed.",
	]),
	"docs": "docs/rules/SG620.md",
	"kinds": ["AppProject"],
}

# 1a. Schedule.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/schedule", [w.index]), "severity": "high", "action": "deny"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	is_string(w.schedule_error)
	msg := sprintf(
		"%s: sync window %d (%s) has schedule \"%s\", which Argo CD cannot parse (%s)%s. Argo CD's API refuses such a project; applied as a manifest it is stored, and every Application the window matches never syncs again: the controller's window check fails with \"invalid sync windows: cannot parse schedule\", for automated and manual syncs alike. %s",
		[_subject, w.index, _kind_text(w), w.schedule, w.schedule_error, _schedule_hint(w), _fix_parse],
	)
}

# 1b. Duration.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/duration", [w.index]), "severity": "high", "action": "deny"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	is_string(w.duration_error)
	msg := sprintf(
		"%s: sync window %d (%s) has duration \"%s\", which Argo CD cannot parse (%s)%s. Argo CD's API refuses such a project; applied as a manifest it is stored, and every Application the window matches never syncs again: the controller's window check fails with \"invalid sync windows: cannot parse duration\", for automated and manual syncs alike. %s",
		[_subject, w.index, _kind_text(w), w.duration, w.duration_error, _duration_hint(w), _fix_parse],
	)
}

_fix_parse := "Fix the field; `argocd proj windows add` checks it as Argo CD will."

_schedule_hint(w) := "; Argo CD's parser takes no @ descriptors: write the five fields, e.g. \"0 0 * * *\" for @daily" if {
	startswith(trim_space(w.schedule), "@")
} else := "; Argo CD's schedules have exactly five fields (minute hour day-of-month month day-of-week), without seconds" if {
	contains(w.schedule_error, "expected exactly 5 fields")
} else := "; day-of-week runs 0-6 (Sunday is 0, or sun): 7 is refused" if {
	contains(w.schedule_error, "above maximum (6)")
} else := ""

_duration_hint(w) := "; Go durations have no day unit: write 24h for a day" if {
	contains(w.duration_error, "unknown unit \"d\"")
} else := "; a duration needs a unit, e.g. 30m or 1h" if {
	contains(w.duration_error, "missing unit")
} else := ""

# 2. A schedule that never fires: always open.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/schedule", [w.index]), "severity": sev, "action": act} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.never_fires == true
	not is_string(w.duration_error)
	sev := _never_fires_severity(w)
	act := _never_fires_action(w)
	msg := sprintf(
		"%s: sync window %d (%s) has schedule \"%s\", which never fires. robfig/cron then returns Go's zero time, which Argo CD reads as a window that opened long ago, so it is open all the time: %s. Give it a schedule that fires.",
		[_subject, w.index, _kind_text(w), w.schedule, _always_open_effect(w)],
	)
}

_never_fires_severity(w) := "high" if w.kind == "deny" else := "medium" if w.kind == "allow" else := "low"

_never_fires_action(w) := "deny" if {
	w.kind == "deny"
	not w.manual_sync == true
} else := "warn"

_always_open_effect(w) := "every sync of the Applications it matches is refused, for good" if {
	w.kind == "deny"
	not w.manual_sync == true
} else := "every automated sync of the Applications it matches is refused, for good (manual syncs pass: manualSync)" if {
	w.kind == "deny"
} else := "it never closes, so it restricts nothing" if {
	w.kind == "allow"
} else := "its kind is not allow or deny anyway"

# 3. Zero or negative duration: never open.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/duration", [w.index]), "severity": "medium"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.never_open == true
	not is_string(w.schedule_error)
	msg := sprintf(
		"%s: sync window %d (%s) has duration \"%s\": Argo CD takes a window as open between a start and start + duration, so a zero or negative duration is never open: %s. Give it a positive duration such as 1h.",
		[_subject, w.index, _kind_text(w), w.duration, _never_open_effect(w)],
	)
}

_never_open_effect(w) := "this deny window never refuses anything" if {
	w.kind == "deny"
} else := "the Applications it matches count as outside every allow window, so their syncs are refused unless another allow window is open" if {
	w.kind == "allow"
} else := "it does nothing"

# 4. A kind the controller does not know.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/kind", [w.index]), "severity": "medium"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.kind_valid == false
	msg := sprintf(
		"%s: sync window %d has kind \"%s\": Argo CD's API refuses it (\"can only be allow or deny\", case-sensitive), and applied as a manifest the controller neither denies nor allows with it, so the window does nothing. Write kind: %s.",
		[_subject, w.index, w.kind, _kind_guess(w)],
	)
}

_kind_guess(w) := "deny" if lower(trim_space(w.kind)) == "deny" else := "allow" if lower(trim_space(w.kind)) == "allow" else := "allow or kind: deny"

# 5. Unknown time zone (2.2+), or a zone before 2.2.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/timeZone", [w.index]), "severity": "medium"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.time_zone_read == true
	w.time_zone_unknown == true
	msg := sprintf(
		"%s: sync window %d (%s) has timeZone \"%s\", which is not a time zone Argo CD knows (an IANA name such as Europe/Berlin; abbreviations like CEST and offsets are not): Argo CD logs \"Invalid time zone\" and runs the window in UTC, so it opens at %s UTC instead of local time. Use the IANA name of the zone.",
		[_subject, w.index, _kind_text(w), w.time_zone, w.schedule],
	)
}

violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/timeZone", [w.index]), "severity": "medium"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.time_zone_read == false
	not w.time_zone in {"", "UTC", "Etc/UTC"}
	msg := sprintf(
		"%s: sync window %d (%s) has timeZone \"%s\", but Argo CD reads timeZone only from 2.2.0 (argo-cd#7442): %s runs every window in UTC, so this one opens at %s UTC. Upgrade Argo CD, or write the schedule in UTC.",
		[_subject, w.index, _kind_text(w), w.time_zone, _version, w.schedule],
	)
}

# 6a. ORed lists that cover every Application while another list looks like a filter.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d", [w.index]), "severity": "medium"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.covers_every_application == true
	count(w.defeated_lists) > 0
	msg := sprintf(
		"%s: sync window %d (%s) lists %s, but Argo CD ORs a window's match lists%s: %s %s every Application, so the window applies to every Application of the project, not only to those its %s select. %s",
		[_subject, w.index, _kind_text(w), _lists_text(w), _or_reason(w), _wildcard_text(w), _match_verb(w), concat(" and ", w.defeated_lists), _or_fix(w)],
	)
}

# 6b. andOperator before 3.0, without a wildcard: the lists are still ORed.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d/andOperator", [w.index]), "severity": "medium"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.and_operator == true
	w.and_in_force == false
	count(w.defeated_lists) == 0
	count(_set_lists(w)) > 1
	msg := sprintf(
		"%s: sync window %d (%s) sets andOperator: true, which Argo CD reads only from 3.0.0 (argo-cd#16846): %s ORs the lists (%s), so the window applies to every Application that any one of them matches. Upgrade Argo CD, or keep a single list.",
		[_subject, w.index, _kind_text(w), _version, _lists_text(w)],
	)
}

_set_lists(w) := [l | some l in ["applications", "clusters", "namespaces"]; count(_list(w, l)) > 0]

_list(w, l) := v if {
	v := object.get(w, l, [])
	is_array(v)
} else := []

_lists_text(w) := concat(" and ", [sprintf("%s: [%s]", [l, concat(", ", _list(w, l))]) | some l in _set_lists(w)])

_wildcard_text(w) := concat(" and ", [sprintf("%s: [%s]", [l, concat(", ", _list(w, l))]) | some l in w.match_all_lists])

_match_verb(w) := "match" if count(w.match_all_lists) > 1 else := "matches"

_or_reason(w) := " (andOperator: true is read only from Argo CD 3.0.0)" if {
	w.and_operator == true
} else := ""

_or_fix(w) := "Upgrade Argo CD to 3.0 for andOperator: true, or drop the wildcard and list the Applications." if {
	w.and_operator == true
} else := "Set andOperator: true (Argo CD 3.0+) so that every list must match, or drop the wildcard." if {
	_release >= 300
} else := "Drop the wildcard and list the Applications (andOperator: true, which makes every list count, needs Argo CD 3.0)."

# 7. No list at all.
violations contains {"msg": msg, "path": sprintf("/spec/syncWindows/%d", [w.index]), "severity": "low"} if {
	input.resource.kind == "AppProject"
	_applies
	some w in _windows
	w.targets_nothing == true
	msg := sprintf(
		"%s: sync window %d (%s) has no applications, namespaces or clusters, so it applies to no Application; Argo CD's API refuses it (\"requires one of application, cluster or namespace\"). Add applications: ['*'] to cover the whole project, or the lists it was meant for.",
		[_subject, w.index, _kind_text(w)],
	)
}

_kind_text(w) := sprintf("%s \"%s\" for %s", [w.kind, w.schedule, w.duration]) if {
	w.kind != ""
} else := sprintf("\"%s\" for %s", [w.schedule, w.duration])

_windows := [w |
	p := object.get(input, "project", {})
	is_object(p)
	ws := object.get(p, "sync_windows", [])
	is_array(ws)
	some w in ws
	is_object(w)
]

# ---- the Argo CD release judged for ----

default _release := 306

_release := r if {
	r := input.argocd.release
	is_number(r)
}

_version := sprintf("v%s", [v]) if {
	v := input.argocd.version
	is_string(v)
	v != ""
} else := "this release"

# ---- input helpers ----

_applies if object.get(input, "operation", "") != "DELETE"

default _resource := {}

_resource := input.resource if is_object(input.resource)

_name := n if {
	m := object.get(_resource, "metadata", {})
	is_object(m)
	n := object.get(m, "name", "")
	is_string(n)
} else := ""

_subject := sprintf("AppProject %s", [_name])
