package libvirtd

import (
	"fmt"
	"sync"

	"libvirt.org/go/libvirt"
)

var (
	eventsOnce sync.Once
	eventsErr  error
)

// EnableEvents starts libvirt's default event loop for this process, once.
// It must run before the connections that register for domain events are
// opened; doing it for every connection is harmless.
func EnableEvents() error {
	eventsOnce.Do(func() {
		if err := libvirt.EventRegisterDefaultImpl(); err != nil {
			eventsErr = fmt.Errorf("register libvirt event loop: %w", err)
			return
		}
		go func() {
			for {
				if err := libvirt.EventRunDefaultImpl(); err != nil {
					return
				}
			}
		}()
	})
	return eventsErr
}
