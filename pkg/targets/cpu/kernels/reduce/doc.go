// Package reduce holds the reductions: Reduce, ArgReduce and TopK over axes,
// and the 2-D window pools (MaxPool2D, AvgPool2D), with results that do not
// depend on the thread count.
package reduce
