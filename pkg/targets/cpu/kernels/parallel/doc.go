// Package parallel is the CPU kernels' worker pool: Pool.For splits an
// index range across persistent goroutines (the caller takes part, so nested
// and concurrent calls cannot deadlock), and Shares hands out task runs
// in a fixed per-thread order so results never depend on the thread count.
package parallel
