package results

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Object timelines are the "what happened" view: every object a flow
// recorded, with or without a role, and every host, each with what
// happened to it in time order relative to the flow's start. Unlike the
// aspects they keep names, since a reader follows one object here; they
// are shown, never diffed.

// flowObjects is one flow's object timelines.
type flowObjects struct {
	Flow    string
	Anchor  string
	Objects []objectTimeline
	// Events are the recorded events about objects the flow did not record.
	Events []timelineEntry
}

// objectTimeline is what happened to one object. Compared says how the
// diff uses it: by its role, as a host record or a Node identity, or not
// at all.
type objectTimeline struct {
	Kind, Name, Role string
	Compared         string
	Entries          []timelineEntry
	Final            []string
}

// timelineEntry is one thing that happened, At relative to the flow's start.
type timelineEntry struct {
	At, What, Detail string
	at               time.Time
}

// digestShown is how many characters of an image identity or user-data
// digest the timeline shows: enough to tell two apart, not the value.
const digestShown = 12

func flowObjectsOf(s ScenarioResult) []flowObjects {
	var out []flowObjects
	sides := s.Sides()
	for _, f := range sides.Flows() {
		if o := s.Observation(f); o != nil {
			fo := objectTimelines(o, anchor("o", s.Scenario, string(f)))
			fo.Flow = sides.Title(f)
			out = append(out, fo)
		}
	}
	return out
}

// objectTimelines builds the timelines of one observation (its caller
// titles the flow): its objects
// (a BareMetalHost object also gets its host's BMC operations and final
// state), then hosts no object stands for, sorted by kind and name.
func objectTimelines(o *Observation, anchorID string) flowObjects {
	fo := flowObjects{Anchor: anchorID}
	tl := flowClock{start: o.StartedAt}
	hostShown := map[string]bool{}
	for _, obj := range o.Objects {
		ot := objectTimeline{Kind: obj.Kind, Name: qualifiedName(obj.Namespace, obj.Name), Role: obj.Role, Compared: objectCompared(obj.Role)}
		ot.Entries, ot.Final = objectEntries(tl, obj), objectFinal(obj)
		if obj.Kind == "BareMetalHost" {
			if h := findHost(o.Hosts, obj.Namespace, obj.Name); h != nil {
				hostShown[qualifiedName(h.Namespace, h.Name)] = true
				ot.Entries = append(ot.Entries, bmcEntries(tl, *h)...)
				ot.Final = append(ot.Final, hostFinal(*h)...)
			}
		}
		fo.Objects = append(fo.Objects, ot)
	}
	for _, h := range o.Hosts {
		if !hostShown[qualifiedName(h.Namespace, h.Name)] {
			fo.Objects = append(fo.Objects, objectTimeline{Kind: "BareMetalHost", Name: qualifiedName(h.Namespace, h.Name),
				Compared: "host record: compared in hosts/*", Entries: bmcEntries(tl, h), Final: hostFinal(h)})
		}
	}
	for i := range fo.Objects {
		ot := &fo.Objects[i]
		ot.Entries = append(ot.Entries, eventEntries(tl, o.Events, ot.Kind, ot.Name)...)
		sortEntries(ot.Entries)
	}
	sort.SliceStable(fo.Objects, func(i, j int) bool {
		a, b := fo.Objects[i], fo.Objects[j]
		return a.Kind < b.Kind || a.Kind == b.Kind && a.Name < b.Name
	})
	fo.Events = unmatchedEvents(tl, o.Events, fo.Objects)
	return fo
}

// objectCompared says how the diff uses an object of the role.
func objectCompared(role string) string {
	switch role {
	case "":
		return "no role: shown, not diffed"
	case nodeRole:
		return "Node identity record: compared in nodes/identity"
	}
	return "compared in objects/" + role + "/*"
}

// flowClock places instants relative to a flow's start.
type flowClock struct{ start time.Time }

func (t flowClock) entry(at time.Time, what, detail string) timelineEntry {
	return timelineEntry{At: signedDuration(at.Sub(t.start)), What: what, Detail: detail, at: at}
}

func objectEntries(t flowClock, obj Object) []timelineEntry {
	var out []timelineEntry
	if !obj.CreatedAt.IsZero() {
		out = append(out, t.entry(obj.CreatedAt, "created", ""))
	}
	for _, p := range obj.Phases {
		out = append(out, t.entry(p.At, "phase "+p.Phase, ""))
	}
	for _, c := range obj.Conditions {
		what := "condition " + c.Type + "=" + c.Status
		if c.Reason != "" {
			what += " " + c.Reason
		}
		out = append(out, t.entry(c.At, what, c.Message))
	}
	for _, r := range obj.Replicas {
		out = append(out, t.entry(r.At, fmt.Sprintf("replicas desired=%d ready=%d available=%d", r.Desired, r.Ready, r.Available), ""))
	}
	for _, p := range obj.Provisioning {
		what := fmt.Sprintf("provisioning image %s format=%s userData=%s",
			truncated(p.Image), orWord(p.Format, "(none)"), orWord(truncated(p.UserData), "(none)"))
		out = append(out, t.entry(p.At, what, ""))
	}
	if obj.DeletedAt != nil {
		out = append(out, t.entry(*obj.DeletedAt, "deleted", ""))
	}
	return out
}

// truncated shortens a digest to its first digestShown characters after
// an algorithm prefix such as "sha256:".
func truncated(digest string) string {
	prefix, rest, ok := strings.Cut(digest, ":")
	if !ok {
		prefix, rest = "", digest
	} else {
		prefix += ":"
	}
	if len(rest) <= digestShown {
		return digest
	}
	return prefix + rest[:digestShown] + "…"
}

func objectFinal(obj Object) []string {
	var out []string
	if obj.ProviderID != "" {
		out = append(out, "providerID "+obj.ProviderID)
	}
	if obj.NodeRef != "" {
		out = append(out, "nodeRef "+obj.NodeRef)
	}
	for _, k := range sortedKeys(obj.Properties) {
		out = append(out, k+"="+obj.Properties[k])
	}
	if obj.Interchangeable {
		out = append(out, "picked from a pool (compared by the transitions of its role)")
	}
	return out
}

func hostFinal(h Host) []string {
	out := []string{"host " + hostState(h)}
	if h.ConsumerRef != nil {
		out = append(out, "consumer "+h.ConsumerRef.Kind+" "+qualifiedName(h.ConsumerRef.Namespace, h.ConsumerRef.Name))
	}
	if h.ErrorType != "" {
		out = append(out, "error "+h.ErrorType)
	}
	return out
}

func bmcEntries(t flowClock, h Host) []timelineEntry {
	out := make([]timelineEntry, 0, len(h.BMC))
	for _, op := range h.BMC {
		out = append(out, t.entry(op.At, "BMC "+op.Operation, ""))
	}
	return out
}

func eventEntries(t flowClock, events []Event, kind, name string) []timelineEntry {
	var out []timelineEntry
	for _, e := range events {
		if e.Object.Kind == kind && qualifiedName(e.Object.Namespace, e.Object.Name) == name {
			out = append(out, eventEntry(t, e))
		}
	}
	return out
}

func eventEntry(t flowClock, e Event) timelineEntry {
	return t.entry(e.At, times(fmt.Sprintf("event %s %s", e.Type, e.Reason), e.Count)+" (last seen)", e.Message)
}

func unmatchedEvents(t flowClock, events []Event, objs []objectTimeline) []timelineEntry {
	known := map[string]bool{}
	for _, ot := range objs {
		known[ot.Kind+" "+ot.Name] = true
	}
	var out []timelineEntry
	for _, e := range events {
		if !known[e.Object.Kind+" "+qualifiedName(e.Object.Namespace, e.Object.Name)] {
			ev := eventEntry(t, e)
			ev.What += " on " + e.Object.Kind + " " + qualifiedName(e.Object.Namespace, e.Object.Name)
			out = append(out, ev)
		}
	}
	sortEntries(out)
	return out
}

func sortEntries(es []timelineEntry) {
	sort.SliceStable(es, func(i, j int) bool { return es[i].at.Before(es[j].at) })
}

func findHost(hosts []Host, namespace, name string) *Host {
	for i := range hosts {
		if hosts[i].Namespace == namespace && hosts[i].Name == name {
			return &hosts[i]
		}
	}
	return nil
}

func qualifiedName(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
