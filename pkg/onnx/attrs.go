package onnx

import "github.com/rlx-project/rlx/pkg/onnx/onnxpb"

func attrInt(n *onnxpb.Node, name string, def int64) int64 {
	if a := n.Attr(name); a != nil {
		return a.I
	}
	return def
}

func attrFloat(n *onnxpb.Node, name string, def float64) float64 {
	if a := n.Attr(name); a != nil {
		return float64(a.F)
	}
	return def
}

func attrInts(n *onnxpb.Node, name string) ([]int64, bool) {
	if a := n.Attr(name); a != nil {
		return a.Ints, true
	}
	return nil, false
}

func attrString(n *onnxpb.Node, name, def string) string {
	if a := n.Attr(name); a != nil {
		return string(a.S)
	}
	return def
}
