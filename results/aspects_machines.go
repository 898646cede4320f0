package results

import (
	"fmt"
	"sort"
	"strings"
)

// nodeLinks knows the providerID of each Node by name: from the Nodes at
// the end of the run, else from node records that carry one.
type nodeLinks map[string]string

func newNodeLinks(o *Observation) nodeLinks {
	links := nodeLinks{}
	var records []Object
	for _, obj := range o.Objects {
		if obj.Role == nodeRole && obj.ProviderID != "" {
			records = append(records, obj)
		}
	}
	// The newest record of a name wins.
	sort.SliceStable(records, func(i, j int) bool { return recordBefore(records[i], records[j]) })
	for _, r := range records {
		links[r.Name] = r.ProviderID
	}
	for _, n := range o.Nodes {
		links[n.Name] = n.ProviderID
	}
	return links
}

// recordBefore orders records of one name by when they existed: created
// earlier, or created at the same time and deleted (a deleted record
// precedes the live one). UIDs are random and never decide.
func recordBefore(a, b Object) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	if a.DeletedAt == nil || b.DeletedAt == nil {
		return a.DeletedAt != nil && b.DeletedAt == nil
	}
	return a.DeletedAt.Before(*b.DeletedAt)
}

// line is "providerID=<scheme> node=<link>" for a live object: linked
// when the Node status.nodeRef names has the object's providerID, mismatch
// when it has another (or none), none when there is no nodeRef, unknown
// when the Node was not seen. A deleted object is "providerID=<scheme>
// (deleted)": the Node of its name at the end of the run, if any, belongs
// to whatever Machine took its host next, which is chance.
func (l nodeLinks) line(obj Object) string {
	if obj.DeletedAt != nil {
		return fmt.Sprintf("providerID=%s (deleted)", providerIDScheme(obj.ProviderID))
	}
	link := "none"
	if obj.NodeRef != "" {
		nodeID, seen := l[obj.NodeRef]
		switch {
		case !seen:
			link = "unknown"
		case nodeID != "" && nodeID == obj.ProviderID:
			link = "linked"
		default:
			link = "mismatch"
		}
	}
	return fmt.Sprintf("providerID=%s node=%s", providerIDScheme(obj.ProviderID), link)
}

// replicaLine is a set's settled replica series: each desired level in
// order with the ready/available counts last seen at it, e.g.
// "2: 2/2 → 1: 1/1 → 3: 3/3". Samples with the same desired count are one
// level, whatever the counts did on the way; leading levels of 0 are the
// set being created and are dropped (unless 0 is all there is).
func replicaLine(obj Object) string {
	type level struct{ desired, ready, available int }
	var levels []level
	for _, r := range obj.Replicas {
		l := level{r.Desired, r.Ready, r.Available}
		if n := len(levels); n > 0 && levels[n-1].desired == r.Desired {
			levels[n-1] = l
			continue
		}
		levels = append(levels, l)
	}
	for len(levels) > 1 && levels[0].desired == 0 {
		levels = levels[1:]
	}
	parts := make([]string, 0, len(levels))
	for _, l := range levels {
		parts = append(parts, fmt.Sprintf("%d: %d/%d", l.desired, l.ready, l.available))
	}
	line := strings.Join(parts, " → ")
	if obj.DeletedAt != nil {
		line += " (deleted)"
	}
	return line
}

// provisioningLines is one line per image a host of the role was given:
// "format=<fmt|none> image=shared|own userData=none|shared|own|unreadable".
// shared means the same image (or user data) went to two or more
// provisionings of the role in this flow, own that it went to this one
// only; the digests themselves differ between runs and are left out.
func provisioningLines(objs []Object) []string {
	images, userData := map[string]int{}, map[string]int{}
	for _, obj := range objs {
		for _, p := range obj.Provisioning {
			images[p.Image]++
			userData[p.UserData]++
		}
	}
	var lines []string
	for _, obj := range objs {
		for _, p := range obj.Provisioning {
			line := fmt.Sprintf("format=%s image=%s userData=%s",
				orWord(p.Format, "none"), sharing(p.Image, images), userDataSharing(p.UserData, userData))
			if p.CustomDeploy != "" {
				line = "customDeploy=" + p.CustomDeploy + " " + line
			}
			lines = append(lines, line)
		}
	}
	return lines
}

func userDataSharing(digest string, counts map[string]int) string {
	if strings.HasPrefix(digest, "unreadable") {
		return "unreadable"
	}
	return sharing(digest, counts)
}

func sharing(identity string, counts map[string]int) string {
	switch {
	case identity == "":
		return "none"
	case counts[identity] >= 2:
		return "shared"
	}
	return "own"
}

func orWord(s, word string) string {
	if s == "" {
		return word
	}
	return s
}
