package machines

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/process"
)

// runRecordFile, in a run's data dir, names the run's owner, so a pool can
// be judged without its ledger.
const runRecordFile = "run.json"

func writeRunRecord(dataDir string, owner Metadata) error {
	raw, err := json.Marshal(owner)
	if err != nil {
		return fmt.Errorf("encode run record: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dataDir, runRecordFile), raw, 0o644); err != nil {
		return fmt.Errorf("write run record: %w", err)
	}
	return nil
}

// Orphan is a libvirt object of a lab run whose owning process is gone.
type Orphan struct {
	// Kind is KindDomain or KindPool.
	Kind string
	// Name is the domain or pool name; ID the domain UUID or pool path.
	Name, ID string
	RunID    string
}

func (o Orphan) String() string { return fmt.Sprintf("%s %s (run %s)", o.Kind, o.Name, o.RunID) }

// FindOrphans lists lab domains and pools whose run's owner no longer runs:
// what a crashed run left when its ledger is lost too. Objects of live runs
// and objects without paritylab metadata are never listed.
func FindOrphans(conn *libvirt.Connect) ([]Orphan, error) {
	domains, live, err := orphanDomains(conn)
	if err != nil {
		return nil, err
	}
	pools, err := orphanPools(conn, live)
	if err != nil {
		return nil, err
	}
	return append(domains, pools...), nil
}

// orphanDomains also returns the runs that have a live owner.
func orphanDomains(conn *libvirt.Connect) ([]Orphan, map[string]bool, error) {
	doms, err := conn.ListAllDomains(0)
	if err != nil {
		return nil, nil, fmt.Errorf("list domains: %w", err)
	}
	live := map[string]bool{}
	var out []Orphan
	for i := range doms {
		meta, name, uuid, ok := labDomain(&doms[i])
		doms[i].Free()
		if !ok {
			continue
		}
		if ownerAlive(meta) {
			live[meta.RunID] = true
			continue
		}
		out = append(out, Orphan{Kind: KindDomain, Name: name, ID: uuid, RunID: meta.RunID})
	}
	return out, live, nil
}

func labDomain(dom *libvirt.Domain) (Metadata, string, string, bool) {
	raw, err := dom.GetXMLDesc(libvirt.DOMAIN_XML_INACTIVE)
	if err != nil {
		return Metadata{}, "", "", false
	}
	var def libvirtxml.Domain
	if def.Unmarshal(raw) != nil {
		return Metadata{}, "", "", false
	}
	meta, ok := ParseMetadata(&def)
	return meta, def.Name, def.UUID, ok
}

func ownerAlive(m Metadata) bool {
	if m.OwnerPID == 0 {
		return false
	}
	return process.Identity{PID: m.OwnerPID, StartTicks: m.OwnerStartTicks}.Alive()
}

// orphanPools lists pools a lab made (named <run>-pool, in DataRoot/<run>)
// whose run record names a dead owner and that no live domain belongs to.
func orphanPools(conn *libvirt.Connect, liveRuns map[string]bool) ([]Orphan, error) {
	pools, err := conn.ListAllStoragePools(0)
	if err != nil {
		return nil, fmt.Errorf("list pools: %w", err)
	}
	var out []Orphan
	for i := range pools {
		name, _ := pools[i].GetName()
		path := poolPath(&pools[i])
		pools[i].Free()
		run, ok := strings.CutSuffix(name, "-pool")
		if !ok || path != filepath.Join(DataRoot, run, "pool") || liveRuns[run] {
			continue
		}
		if owner, err := readRunRecord(filepath.Join(DataRoot, run)); err == nil && ownerAlive(owner) {
			continue
		}
		out = append(out, Orphan{Kind: KindPool, Name: name, ID: path, RunID: run})
	}
	return out, nil
}

func poolPath(p *libvirt.StoragePool) string {
	raw, err := p.GetXMLDesc(0)
	if err != nil {
		return ""
	}
	var def libvirtxml.StoragePool
	if def.Unmarshal(raw) != nil || def.Target == nil {
		return ""
	}
	return def.Target.Path
}

func readRunRecord(dataDir string) (Metadata, error) {
	raw, err := os.ReadFile(filepath.Join(dataDir, runRecordFile))
	if err != nil {
		return Metadata{}, err
	}
	var m Metadata
	return m, json.Unmarshal(raw, &m)
}

// RemoveOrphans removes what FindOrphans found: domains first, then pools
// with their run's data dir.
func RemoveOrphans(conn *libvirt.Connect, orphans []Orphan) error {
	var errs []error
	for _, o := range orphans {
		if o.Kind == KindDomain {
			errs = append(errs, removeDomain(conn, o.ID))
		}
	}
	for _, o := range orphans {
		if o.Kind != KindPool {
			continue
		}
		if err := removePool(conn, o.Name, o.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, os.RemoveAll(filepath.Dir(o.ID)))
	}
	return errors.Join(errs...)
}
