package assisted

// RoleRequirements are the hardware minimums of one role.
type RoleRequirements struct {
	CPUCores   int64 `json:"cpu_cores"`
	RAMMiB     int64 `json:"ram_mib"`
	DiskSizeGB int64 `json:"disk_size_gb"`
}

// Requirements are the per-role minimums, in the shape of assisted-service's
// HW_VALIDATOR_REQUIREMENTS.
type Requirements struct {
	Master RoleRequirements `json:"master"`
	Worker RoleRequirements `json:"worker"`
	// SNO applies to the control-plane host of a single-node cluster.
	SNO RoleRequirements `json:"sno"`
}

// DefaultRequirements are the minimums assisted-service ships by default.
func DefaultRequirements() Requirements {
	return Requirements{
		Master: RoleRequirements{CPUCores: 4, RAMMiB: 16384, DiskSizeGB: 100},
		Worker: RoleRequirements{CPUCores: 2, RAMMiB: 8192, DiskSizeGB: 100},
		SNO:    RoleRequirements{CPUCores: 8, RAMMiB: 16384, DiskSizeGB: 100},
	}
}
