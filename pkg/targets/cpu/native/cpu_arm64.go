package native

import "golang.org/x/sys/cpu"

// hasFeature reports whether this CPU has the feature of that name (a
// name in a [Level]'s Features), as the kernel reports it (HWCAP).
func hasFeature(name string) bool {
	switch name {
	case "fp":
		return cpu.ARM64.HasFP
	case "asimd":
		return cpu.ARM64.HasASIMD
	case "atomics":
		return cpu.ARM64.HasATOMICS
	case "asimdrdm":
		return cpu.ARM64.HasASIMDRDM
	case "crc32":
		return cpu.ARM64.HasCRC32
	}
	return false
}
