package machines

import (
	"crypto/sha256"
	"fmt"
)

// MACFor derives a stable MAC for a lab host from its name, in QEMU's
// locally administered 52:54:00 range: the same host gets the same MAC in
// every run, so BareMetalHost fixtures can be written down.
func MACFor(host string) string {
	sum := sha256.Sum256([]byte("paritylab-host/" + host))
	return fmt.Sprintf("52:54:00:%02x:%02x:%02x", sum[0], sum[1], sum[2])
}
