package native

import "golang.org/x/sys/cpu"

// cpuid executes CPUID with EAX=eaxArg and ECX=ecxArg (cpuid_amd64.s).
// golang.org/x/sys/cpu reads the features it reports once at start-up
// but has no F16C, LZCNT, MOVBE or LAHF/SAHF, and does not export its own
// cpuid, so those four are read here.
func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)

// hasFeature reports whether this CPU has the feature of that name (a
// name in a [Level]'s Features), with the OS support it needs.
func hasFeature(name string) bool {
	switch name {
	case "cx16":
		return cpu.X86.HasCX16
	case "popcnt":
		return cpu.X86.HasPOPCNT
	case "sse3":
		return cpu.X86.HasSSE3
	case "ssse3":
		return cpu.X86.HasSSSE3
	case "sse4.1":
		return cpu.X86.HasSSE41
	case "sse4.2":
		return cpu.X86.HasSSE42
	case "avx":
		// x/sys/cpu sets HasAVX only if XCR0 says the OS saves the
		// xmm and ymm registers.
		return cpu.X86.HasAVX
	case "avx2":
		return cpu.X86.HasAVX2
	case "bmi1":
		return cpu.X86.HasBMI1
	case "bmi2":
		return cpu.X86.HasBMI2
	case "fma":
		return cpu.X86.HasFMA && cpu.X86.HasAVX
	case "osxsave":
		return cpu.X86.HasOSXSAVE
	case "avx512f":
		// x/sys/cpu sets the AVX-512 bits only if XCR0 says the OS
		// saves the opmask and zmm registers.
		return cpu.X86.HasAVX512F
	case "avx512bw":
		return cpu.X86.HasAVX512BW
	case "avx512cd":
		return cpu.X86.HasAVX512CD
	case "avx512dq":
		return cpu.X86.HasAVX512DQ
	case "avx512vl":
		return cpu.X86.HasAVX512VL
	case "f16c":
		// VEX-encoded: usable only where AVX is.
		_, _, ecx, _ := cpuid(1, 0)
		return ecx&(1<<29) != 0 && cpu.X86.HasAVX
	case "movbe":
		_, _, ecx, _ := cpuid(1, 0)
		return ecx&(1<<22) != 0
	case "lahf", "lzcnt":
		if maxExt, _, _, _ := cpuid(0x80000000, 0); maxExt < 0x80000001 {
			return false
		}
		_, _, ecx, _ := cpuid(0x80000001, 0)
		if name == "lahf" {
			return ecx&(1<<0) != 0
		}
		return ecx&(1<<5) != 0 // ABM: LZCNT
	}
	return false
}
