package machines

import (
	"encoding/xml"
	"fmt"
	"strings"

	"libvirt.org/go/libvirtxml"
)

// MetadataNamespace is the XML namespace of paritylab's domain metadata.
const MetadataNamespace = "https://paritylab.io/xmlns/libvirt/host/v1"

// Metadata is what a lab domain records about itself, so a reaper can tell
// whose it is and whether that run is still alive.
type Metadata struct {
	XMLName xml.Name `xml:"https://paritylab.io/xmlns/libvirt/host/v1 host"`
	// RunID of the run that made the domain.
	RunID string `xml:"run,attr"`
	// Host is the lab host name (the domain name without the run prefix).
	Host string `xml:"name,attr"`
	// OwnerPID and OwnerStartTicks identify the process that owns the run.
	OwnerPID        int    `xml:"owner-pid,attr,omitempty"`
	OwnerStartTicks uint64 `xml:"owner-start,attr,omitempty"`
	// StateDir is the run's state directory.
	StateDir string `xml:"state-dir,attr,omitempty"`
	// BootTarget and BootEnabled are the BMC's boot override (Redfish
	// BootSourceOverrideTarget and BootSourceOverrideEnabled).
	BootTarget  string `xml:"boot-target,attr,omitempty"`
	BootEnabled string `xml:"boot-enabled,attr,omitempty"`
	// MediaURL is the URL of the image in the CD-ROM, as the BMC's client
	// gave it.
	MediaURL string `xml:"media-url,attr,omitempty"`
}

// SetMetadata replaces the paritylab metadata of a definition.
func SetMetadata(dom *libvirtxml.Domain, m Metadata) error {
	el, err := m.element()
	if err != nil {
		return err
	}
	dom.Metadata = el
	return nil
}

func (m Metadata) element() (*libvirtxml.DomainMetadata, error) {
	raw, err := xml.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode domain metadata: %w", err)
	}
	return &libvirtxml.DomainMetadata{XML: string(raw)}, nil
}

// ParseMetadata reads paritylab metadata from a domain's <metadata>
// content; ok is false when the domain has none (it is not a lab domain).
func ParseMetadata(dom *libvirtxml.Domain) (Metadata, bool) {
	if dom.Metadata == nil {
		return Metadata{}, false
	}
	// The metadata element may hold elements of other namespaces too.
	dec := xml.NewDecoder(strings.NewReader(dom.Metadata.XML))
	for {
		tok, err := dec.Token()
		if err != nil {
			return Metadata{}, false
		}
		start, ok := tok.(xml.StartElement)
		if !ok || start.Name.Space != MetadataNamespace || start.Name.Local != "host" {
			continue
		}
		var m Metadata
		if err := dec.DecodeElement(&m, &start); err != nil || m.RunID == "" {
			return Metadata{}, false
		}
		return m, true
	}
}
