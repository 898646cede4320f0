// Package day2scale is the Day-2 scale scenario, on the clusters the
// day1 scenario installed (or installs itself when run alone): workers
// scaled up by 2 and down by 1 with a machine marked by the delete
// annotation, then deletion orders Newest and Oldest, then one worker
// added on day 2 — through a MAO MachineSet on the spoke with a ZTP day-2
// BareMetalHost in the MAPI flow, through a CAPI MachineDeployment on the
// hub in the CAPI flow.
package day2scale
