// Package redfish is the lab's BMC emulator: one HTTP server on a loopback
// port that serves many systems the way a Redfish BMC does for Ironic and
// the python sushy library (the contract sushy-tools implements), backed by
// a small Backend interface with two implementations:
//
//   - lab/redfish/libvirt: real libvirt domains (power, boot order,
//     virtual media attached to the domain's CD-ROM; CPUs, architecture
//     and disk sizes read from the definition and its storage volumes);
//   - lab/redfish/memory: systems that exist only in memory, for scale runs.
//
// The server adds what no backend should care about: routing, HTTP Basic
// auth against a bcrypt htpasswd file, optional TLS, Redfish error bodies
// for every error, image download for InsertMedia, and per-system fault
// injection for reliability scenarios.
//
// Wire decisions, checked against python3-sushy 4.3.3 and gofish:
//
//   - Sessions are implemented (POST SessionService/Sessions answers 201
//     with X-Auth-Token and Location; DELETE logs out; 30 min idle
//     timeout). sushy's default auth tries a session first and falls back
//     to Basic only on an error, and gofish logs in with a session by
//     default, so serving sessions exercises the path clients take against
//     real BMCs. Basic auth works on every request too. A bcrypt check
//     costs tens of milliseconds, so a Basic pair that verified once is
//     cached (as an HMAC, in memory); wrong passwords always pay full cost.
//   - /redfish answers the version document {"v1": "/redfish/v1/"};
//     /redfish/v1 and /redfish/v1/ the service root. These need no
//     credentials, nor does the session login.
//   - A request for /redfish/v1/{Systems,Managers,Chassis}/<name>[/...]
//     answers 307 to the same path with the system ID, for any method.
//   - A System links Processors, Storage and SimpleStorage, which out-of-
//     band inspection reads (gofish, the lab's bare-metal operator, Ironic
//     through sushy). Processors has CPU0 ... CPU<n-1>, one per CPU of
//     ProcessorSummary.Count, as sushy-tools' libvirt driver serves them;
//     each has one core and one thread, because sushy counts a system's
//     CPUs as the sum of TotalThreads. ProcessorArchitecture and
//     InstructionSet come from the backend's architecture (x86_64 is x86
//     and x86-64), Model when the backend knows it. Disks are grouped by
//     bus (virtio, sata, ...): Storage/<bus> links Drives/<disk> (Id the
//     target device, CapacityBytes, MediaType HDD or SSD, Protocol), and
//     SimpleStorage/<bus> lists the same disks as Devices with
//     CapacityBytes, the shape sushy-tools serves. An unknown processor,
//     storage or drive answers 404 ResourceNotFound.
//   - PATCH of a System takes Boot (target, enabled, mode) and
//     IndicatorLED only, checks the whole body before changing anything,
//     and answers 204. A Once override is spent by the next power-on
//     (On/ForceOn from Off, or a restart): BootSourceOverrideEnabled goes
//     back to Disabled and the target stays, as the Redfish schema says.
//   - Every error is a Redfish error body whose code is the Base.1.16
//     message ID (PropertyUnknown, ActionParameterNotSupported, ...) and
//     whose message says what to fix; Severity is Warning or Critical so
//     sushy shows the message.
//   - InsertMedia downloads the image (only from 127.0.0.0/8 or [::1],
//     checked on the URL, every redirect and, with the default client, at
//     connect time) into the image directory, then hands the file to the
//     Backend; EjectMedia removes it. Media must be ejected before
//     another insert (409).
//   - Faults (status, latency, ignorePower, count) per system, through
//     Server.SetFault or /paritylab/v1/systems/{id}/faults (GET, PUT,
//     DELETE; same auth), apply to requests under that system's System,
//     Manager and Chassis.
//   - Each system has an operation log for parity timelines: every power
//     action (power:<ResetType>), virtual media insert and eject
//     (media:insert, media:eject) and boot override PATCH
//     (boot:<Target>/<Enabled>, the values in effect after it) the server
//     carried out, stamped with the time it did so (UTC; never earlier
//     than the entry before). Refused requests (bad input, injected error
//     statuses, auth failures, backend errors) and power actions an
//     IgnorePower fault swallowed were not carried out and are not in it;
//     an eject of an empty device is. Only the newest 10000 operations per
//     system are kept, so a long-running emulator stays bounded. Read it
//     with Server.Operations, GET /paritylab/v1/systems/{id}/operations
//     [?since=<RFC 3339 time>] (same auth as faults; by ID or name;
//     {"operations":[{"at","operation"}]} oldest first), or
//     FetchOperations from another process (ParseBMCAddress splits a
//     BareMetalHost bmc.address into its base URL and system ID). Each
//     operation is also logged at V(0) as "BMC operation".
//
// It must not import anything above lab.
package redfish
