package runtime

import (
	"encoding/binary"
	"fmt"

	"github.com/rlx-project/rlx/pkg/lir"
	"github.com/rlx-project/rlx/pkg/targets/gpu/vk"
)

// Vulkan adapts a Vulkan device (SPIR-V kernels).
type Vulkan struct{ D *vk.Device }

// OpenVulkan opens the system's Vulkan device.
func OpenVulkan() (*Vulkan, error) {
	d, err := vk.Open()
	if err != nil {
		return nil, err
	}
	return &Vulkan{D: d}, nil
}

// Name is the device's name.
func (v *Vulkan) Name() string { return "vulkan: " + v.D.Name() }

// Alloc makes a storage buffer.
func (v *Vulkan) Alloc(n int64) (Buffer, error) {
	b, err := v.D.NewBuffer(n)
	if err != nil {
		return nil, err
	}
	return b, nil
}

type vkKernel struct{ p *vk.Pipeline }

func (k vkKernel) Free() { k.p.Free() }

// Load makes a compute pipeline from the kernel's SPIR-V; a kernel that
// takes launch offsets gets one i32 of push constants per parameter.
func (v *Vulkan) Load(k *lir.Kernel) (Kernel, error) {
	if k.BinaryKind != "spirv" || len(k.Binary) == 0 {
		return nil, fmt.Errorf("kernel %s has no SPIR-V (binary %q)", k.Name, k.BinaryKind)
	}
	push := 0
	if k.Offsets {
		push = 4 * len(k.Params)
		if limit := int(v.D.Limits().MaxPushConstantsSize); push > limit {
			return nil, fmt.Errorf("kernel %s takes %d bytes of launch offsets; %s has %d bytes of push constants (rebuild for this device)", k.Name, push, v.D.Name(), limit)
		}
	}
	p, err := v.D.NewPipeline(k.Binary, k.Entry, len(k.Params), push)
	if err != nil {
		return nil, err
	}
	return vkKernel{p}, nil
}

// Prepare records the launches into one command buffer, each one's
// offsets as its push constants.
func (v *Vulkan) Prepare(ls []Launch) (Sequence, error) {
	ds := make([]vk.Dispatch, len(ls))
	for i, l := range ls {
		k, ok := l.Kernel.(vkKernel)
		if !ok {
			return nil, fmt.Errorf("launch %d: not a vulkan kernel", i)
		}
		ds[i] = vk.Dispatch{Pipeline: k.p, Groups: l.Groups}
		if len(l.Offsets) > 0 {
			ds[i].Push = make([]byte, 0, 4*len(l.Offsets))
			for _, o := range l.Offsets {
				ds[i].Push = binary.LittleEndian.AppendUint32(ds[i].Push, uint32(o))
			}
		}
		for _, b := range l.Buffers {
			vb, ok := b.(*vk.Buffer)
			if !ok {
				return nil, fmt.Errorf("launch %d: not a vulkan buffer", i)
			}
			ds[i].Buffers = append(ds[i].Buffers, vb)
		}
	}
	c, err := v.D.Record(ds)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Close closes the device.
func (v *Vulkan) Close() error { return v.D.Close() }
