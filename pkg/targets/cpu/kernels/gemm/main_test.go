package gemm

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

var kernelFlag = flag.String("gemm.kernel", "", "run the package's tests and benchmarks on the named kernel (go, avx2-fma, avx512f) instead of this machine's default, to compare kernels the CPU runs")

func TestMain(m *testing.M) {
	flag.Parse()
	if *kernelFlag != "" {
		found := false
		for _, kn := range testKernels() {
			if kn.name == *kernelFlag {
				gemmDefault, found = kn, true
			}
		}
		if !found {
			fmt.Fprintf(os.Stderr, "gemm: -gemm.kernel=%s: not a kernel this machine runs\n", *kernelFlag)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
