package npy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rlx-project/rlx/pkg/tensor"
)

// FuzzRead: Read never panics; a sized and an unsized reader agree; and
// whatever Read accepts, Write then Read gives back unchanged.
func FuzzRead(f *testing.F) {
	for _, dt := range allDTypes {
		for _, shape := range [][]int64{{}, {3}, {2, 2}, {0, 4}} {
			var buf bytes.Buffer
			if err := Write(&buf, tensor.New(dt, shape...)); err != nil {
				f.Fatal(err)
			}
			f.Add(buf.Bytes())
		}
	}
	for _, hdr := range []string{
		"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n",
		"{'descr': '>i4', 'fortran_order': True, 'shape': (3, 2), }\n",
		"{'descr': '>f8', 'fortran_order': False, 'shape': (3,), }\n",
		"{'descr': '|b1', 'fortran_order': False, 'shape': (2, 3), }\n",
		"{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (3L, 2L)}",
		"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }\n",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 2), }\n",
	} {
		for _, major := range []byte{1, 2, 3} {
			f.Add(npyBytes(major, hdr, []byte(strings.Repeat("\x01\x02\x03\x04\x05\x06", 8))))
		}
	}
	f.Add([]byte("\x93NUMPY\x01\x00"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := Read(bytes.NewReader(in))
		got2, err2 := Read(onlyReader{bytes.NewReader(in)})
		if (err == nil) != (err2 == nil) {
			t.Fatalf("sized and unsized readers disagree: %v vs %v", err, err2)
		}
		if err != nil {
			return
		}
		if !sameTensor(got, got2) {
			t.Fatalf("sized and unsized readers disagree: %s vs %s", describe(got), describe(got2))
		}
		if err := got.Check(); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, got); err != nil {
			t.Fatalf("Write of a tensor Read accepted: %v", err)
		}
		again, err := Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("Read of Write's output: %v", err)
		}
		if !sameTensor(got, again) {
			t.Fatalf("round trip changed %s into %s", describe(got), describe(again))
		}
	})
}
