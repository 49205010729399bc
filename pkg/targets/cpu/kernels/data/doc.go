// Package data moves tensor elements without arithmetic, for any element
// type: strided Copy (transposes and slices as views), Gather and Scatter.
package data
