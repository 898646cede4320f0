package redfish

import (
	"net/http"
	"slices"
	"sync"
)

// indicatorLEDs are the IndicatorLED values a PATCH may set.
var indicatorLEDs = []string{"Lit", "Blinking", "Off"}

// bootEnablements are the BootSourceOverrideEnabled values.
var bootEnablements = []string{BootDisabled, BootOnce, BootContinuous}

func (s *Server) listSystems(w http.ResponseWriter, r *http.Request, _ *request) error {
	ids, err := s.backend.Systems(r.Context())
	if err != nil {
		return backendError(err, "GeneralError", "ResourceInUse")
	}
	paths := make([]string, len(ids))
	for i, id := range ids {
		paths[i] = systemPath(id)
	}
	writeJSON(w, http.StatusOK, collection("#ComputerSystemCollection.ComputerSystemCollection", systemsPath, "Computer System Collection", paths))
	return nil
}

func (s *Server) getSystem(w http.ResponseWriter, _ *http.Request, rq *request) error {
	writeJSON(w, http.StatusOK, s.systemResource(rq.system))
	return nil
}

func (s *Server) systemResource(sys *System) resource {
	resetTypes := make([]string, len(ResetTypes))
	for i, t := range ResetTypes {
		resetTypes[i] = string(t)
	}
	return resource{
		"@odata.type":  "#ComputerSystem.v1_10_0.ComputerSystem",
		"@odata.id":    systemPath(sys.ID),
		"Id":           sys.ID,
		"Name":         sys.Name,
		"UUID":         sys.UUID,
		"SystemType":   "Physical",
		"Manufacturer": "paritylab",
		"Model":        "Emulated system",
		"PowerState":   sys.PowerState,
		"IndicatorLED": s.leds.get(sys.ID),
		"Status":       resource{"State": "Enabled", "Health": "OK"},
		"Boot": resource{
			"BootSourceOverrideTarget":                         sys.Boot.Target,
			"BootSourceOverrideEnabled":                        sys.Boot.Enabled,
			"BootSourceOverrideMode":                           sys.Boot.Mode,
			"BootSourceOverrideTarget@Redfish.AllowableValues": nonNil(sys.BootTargets),
			"BootSourceOverrideMode@Redfish.AllowableValues":   nonNil(sys.BootModes),
		},
		"ProcessorSummary":   resource{"Count": sys.Processors, "Status": resource{"State": "Enabled", "Health": "OK"}},
		"MemorySummary":      resource{"TotalSystemMemoryGiB": sys.MemoryGiB, "Status": resource{"State": "Enabled", "Health": "OK"}},
		"EthernetInterfaces": link(nicsPath(sys.ID)),
		"VirtualMedia":       link(mediaCollectionPath(sys.ID)),
		"Processors":         link(processorsPath(sys.ID)),
		"Storage":            link(storageCollectionPath(sys.ID)),
		"SimpleStorage":      link(simpleStorageCollectionPath(sys.ID)),
		"Links": resource{
			"ManagedBy": links(managerPath(sys.ID)),
			"Chassis":   links(chassisItemPath(sys.ID)),
		},
		"Actions": resource{
			"#ComputerSystem.Reset": resource{
				"target":                            resetPath(sys.ID),
				"ResetType@Redfish.AllowableValues": resetTypes,
			},
		},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// systemPatch is what a PATCH of a System may change.
type systemPatch struct {
	boot BootPatch
	led  string
}

// patchSystem applies Boot and IndicatorLED. The whole body is checked
// before anything changes, so a rejected PATCH changes nothing.
func (s *Server) patchSystem(w http.ResponseWriter, r *http.Request, rq *request) error {
	body, err := readObject(w, r)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return errEmptyJSON("a System accepts Boot and IndicatorLED")
	}
	p, err := parseSystemPatch(body, rq.system)
	if err != nil {
		return err
	}
	if p.boot != (BootPatch{}) {
		if err := s.backend.SetBoot(r.Context(), rq.system.ID, p.boot); err != nil {
			return backendError(err, "PropertyValueIncorrect", "PropertyValueExternalConflict")
		}
		// Backends apply a patch with ApplyBootPatch, so applying it to
		// the state this request loaded gives the override now in effect.
		boot, _ := ApplyBootPatch(rq.system.Boot, p.boot)
		s.recordOperation(rq.system.ID, bootOperation(boot))
	}
	if p.led != "" {
		s.leds.set(rq.system.ID, p.led)
	}
	return noContent(w)
}

// readOnlySystemProperties are properties a System shows but a PATCH may
// not set; they get a clearer error than unknown ones.
var readOnlySystemProperties = []string{
	"@odata.id", "@odata.type", "Id", "Name", "UUID", "PowerState", "Status", "ProcessorSummary",
	"MemorySummary", "Links", "Actions", "EthernetInterfaces", "VirtualMedia", "SystemType",
	"Manufacturer", "Model", "Processors", "Storage", "SimpleStorage",
}

func parseSystemPatch(body object, sys *System) (systemPatch, error) {
	var p systemPatch
	writable := []string{"Boot", "IndicatorLED"}
	if k := body.unknown(writable...); k != "" {
		if slices.Contains(readOnlySystemProperties, k) {
			return p, errPropertyNotWritable("#/" + k)
		}
		return p, errPropertyUnknown("#/"+k, writable)
	}
	led, ok, terr := body.str("IndicatorLED")
	if terr != nil {
		return p, errPropertyType("#/IndicatorLED", terr.raw, "a string")
	}
	if ok && !slices.Contains(indicatorLEDs, led) {
		return p, errPropertyNotInList("#/IndicatorLED", led, indicatorLEDs)
	}
	p.led = led
	boot, ok, terr := body.object("Boot")
	if terr != nil {
		return p, errPropertyType("#/Boot", terr.raw, "an object")
	}
	if ok {
		var err error
		if p.boot, err = parseBootPatch(boot, sys); err != nil {
			return p, err
		}
	}
	return p, nil
}

func parseBootPatch(boot object, sys *System) (BootPatch, error) {
	const (
		target  = "BootSourceOverrideTarget"
		enabled = "BootSourceOverrideEnabled"
		mode    = "BootSourceOverrideMode"
	)
	var p BootPatch
	writable := []string{target, enabled, mode}
	if k := boot.unknown(writable...); k != "" {
		return p, errPropertyUnknown("#/Boot/"+k, writable)
	}
	fields := []*string{&p.Target, &p.Enabled, &p.Mode}
	for i, name := range writable {
		v, _, terr := boot.str(name)
		if terr != nil {
			return p, errPropertyType("#/Boot/"+name, terr.raw, "a string")
		}
		*fields[i] = v
	}
	if p.Enabled != "" && !slices.Contains(bootEnablements, p.Enabled) {
		return p, errPropertyNotInList("#/Boot/"+enabled, p.Enabled, bootEnablements)
	}
	if p.Mode != "" && !slices.Contains(sys.BootModes, p.Mode) {
		return p, errPropertyNotInList("#/Boot/"+mode, p.Mode, sys.BootModes)
	}
	// With the mode unchanged, the advertised targets are the whole truth;
	// a mode change may change them, and the backend judges that.
	sameMode := p.Mode == "" || p.Mode == sys.Boot.Mode
	if p.Target != "" && sameMode && !slices.Contains(sys.BootTargets, p.Target) {
		return p, errPropertyNotInList("#/Boot/"+target, p.Target, sys.BootTargets)
	}
	return p, nil
}

const resetAction = "ComputerSystem.Reset"

// resetSystem performs a power action. A system with an IgnorePower fault
// acknowledges it and does nothing; a hanging one hangs on (afterReset).
func (s *Server) resetSystem(w http.ResponseWriter, r *http.Request, rq *request) error {
	body, err := readObject(w, r)
	if err != nil {
		return err
	}
	rt, err := parseResetType(body)
	if err != nil {
		return err
	}
	if rq.fault.IgnorePower {
		s.log.V(1).Info("Ignoring power action: fault injected", "system", rq.system.ID, "resetType", rt)
		return noContent(w)
	}
	if err := s.backend.Reset(r.Context(), rq.system.ID, rt); err != nil {
		return backendError(err, "ActionParameterValueError", "ResourceInStandby")
	}
	s.recordOperation(rq.system.ID, powerOperation(rt))
	if err := s.afterReset(r.Context(), rq.system.ID); err != nil {
		return backendError(err, "ActionParameterValueError", "ResourceInStandby")
	}
	return noContent(w)
}

func parseResetType(body object) (ResetType, error) {
	if k := body.unknown("ResetType"); k != "" {
		return "", errActionParamUnknown(resetAction, k, []string{"ResetType"})
	}
	v, ok, terr := body.str("ResetType")
	if terr != nil {
		return "", errActionParamType(resetAction, "ResetType", terr.raw, "a string")
	}
	if !ok {
		return "", errActionParamMissing(resetAction, "ResetType")
	}
	if !slices.Contains(ResetTypes, ResetType(v)) {
		allowed := make([]string, len(ResetTypes))
		for i, t := range ResetTypes {
			allowed[i] = string(t)
		}
		return "", errActionParamNotSupported(resetAction, "ResetType", v, allowed)
	}
	return ResetType(v), nil
}

// ledStore keeps IndicatorLED per system: a BMC feature no backend needs
// to know about.
type ledStore struct {
	mu   sync.Mutex
	leds map[string]string
}

func newLEDStore() *ledStore { return &ledStore{leds: map[string]string{}} }

func (l *ledStore) get(id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if v, ok := l.leds[id]; ok {
		return v
	}
	return "Off"
}

func (l *ledStore) set(id, v string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.leds[id] = v
}
