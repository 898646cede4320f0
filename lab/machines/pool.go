package machines

import (
	"encoding/json"
	"fmt"
	"os"

	"libvirt.org/go/libvirt"
	"libvirt.org/go/libvirtxml"

	"github.com/paritylab/paritylab/lab/state"
)

// Resource kinds this package records in the ledger.
const (
	KindDomain = "libvirt-domain"
	KindPool   = "libvirt-pool"
)

// poolRecord is what the ledger keeps about a pool.
type poolRecord struct {
	Path string `json:"path"`
}

// domainRecord is what the ledger keeps about a domain.
type domainRecord struct {
	Name string `json:"name"`
}

func poolResource(name, path string) state.Resource {
	raw, _ := json.Marshal(poolRecord{Path: path})
	return state.Resource{Kind: KindPool, ID: name, Data: raw}
}

func domainResource(uuid, name string) state.Resource {
	raw, _ := json.Marshal(domainRecord{Name: name})
	return state.Resource{Kind: KindDomain, ID: uuid, Data: raw}
}

// createPool defines, builds and starts a directory pool.
func createPool(conn *libvirt.Connect, name, path string) (*libvirt.StoragePool, error) {
	def := &libvirtxml.StoragePool{
		Type:   "dir",
		Name:   name,
		Target: &libvirtxml.StoragePoolTarget{Path: path},
	}
	raw, err := def.Marshal()
	if err != nil {
		return nil, fmt.Errorf("encode pool %s: %w", name, err)
	}
	pool, err := conn.StoragePoolDefineXML(raw, 0)
	if err != nil {
		return nil, fmt.Errorf("define pool %s: %w", name, err)
	}
	if err := pool.Build(libvirt.STORAGE_POOL_BUILD_NEW); err != nil {
		return pool, fmt.Errorf("build pool %s: %w", name, err)
	}
	if err := pool.Create(0); err != nil {
		return pool, fmt.Errorf("start pool %s: %w", name, err)
	}
	return pool, nil
}

// createVolume makes a sparse qcow2 volume and returns its path.
func createVolume(pool *libvirt.StoragePool, name string, gib uint64) (string, error) {
	def := &libvirtxml.StorageVolume{
		Name:     name,
		Capacity: &libvirtxml.StorageVolumeSize{Value: gib, Unit: "GiB"},
		Target:   &libvirtxml.StorageVolumeTarget{Format: &libvirtxml.StorageVolumeTargetFormat{Type: "qcow2"}},
	}
	raw, err := def.Marshal()
	if err != nil {
		return "", fmt.Errorf("encode volume %s: %w", name, err)
	}
	vol, err := pool.StorageVolCreateXML(raw, 0)
	if err != nil {
		return "", fmt.Errorf("create volume %s: %w", name, err)
	}
	defer vol.Free()
	path, err := vol.GetPath()
	if err != nil {
		return "", fmt.Errorf("volume %s path: %w", name, err)
	}
	return path, nil
}

// removePool stops and undefines a pool and deletes its directory with
// every volume in it. A pool that does not exist is not an error.
func removePool(conn *libvirt.Connect, name, path string) error {
	pool, err := conn.LookupStoragePoolByName(name)
	if err == nil {
		defer pool.Free()
		if active, _ := pool.IsActive(); active {
			if err := pool.Destroy(); err != nil {
				return fmt.Errorf("stop pool %s: %w", name, err)
			}
		}
		if err := pool.Undefine(); err != nil {
			return fmt.Errorf("undefine pool %s: %w", name, err)
		}
	} else if !isNotFound(err) {
		return fmt.Errorf("look up pool %s: %w", name, err)
	}
	if err := os.RemoveAll(path); err != nil {
		return fmt.Errorf("remove pool dir %s: %w", path, err)
	}
	return nil
}

func isNotFound(err error) bool {
	lerr, ok := err.(libvirt.Error)
	return ok && (lerr.Code == libvirt.ERR_NO_DOMAIN || lerr.Code == libvirt.ERR_NO_STORAGE_POOL || lerr.Code == libvirt.ERR_NO_STORAGE_VOL)
}

func isNotRunning(err error) bool {
	lerr, ok := err.(libvirt.Error)
	return ok && lerr.Code == libvirt.ERR_OPERATION_INVALID
}
