//go:build !amd64 && !arm64

package native

// hasFeature reports no feature: no level's code runs on this
// architecture ([Level.Runs] says so before it asks).
func hasFeature(string) bool { return false }
