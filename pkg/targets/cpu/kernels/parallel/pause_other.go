//go:build !(amd64 || arm64) || purego

package parallel

// pause is the spin hint where there is no instruction for it here.
func pause() {}
