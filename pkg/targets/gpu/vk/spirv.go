package vk

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
)

// SPIR-V numbers used by checkSPIRV (from the SPIR-V specification).
const (
	spirvMagic       = 0x07230203
	spirvHeaderWords = 5
	opEntryPoint     = 15
	opTypeInt        = 21
	opTypeFloat      = 22
	opTypeStruct     = 30
	opTypePointer    = 32
	opVariable       = 59
	opDecorate       = 71
	opMemberDecorate = 72
	execGLCompute    = 5
	decBufferBlock   = 3
	decBinding       = 33
	decDescriptorSet = 34
	decOffset        = 35
	scUniform        = 2
	scPushConstant   = 9
	scStorageBuffer  = 12
)

// checkSPIRV checks that code is a SPIR-V module whose GLCompute entry point
// entry can run with the pipeline layout NewPipeline builds (set 0, bindings
// 0..numBindings-1, each one storage buffer, and pushBytes bytes of push
// constants: at most one push-constant block, of scalar members, that
// ends within them), and returns its words (a copy, so they are 4-byte
// aligned). Drivers do not validate
// modules and may crash on a bad one; this catches the mistakes that are
// cheap to find: not SPIR-V, a truncated or garbled instruction stream, a
// missing entry point, and resources the layout does not provide. It is
// stricter than Vulkan in one way: a declared but unused resource outside
// the layout is an error too.
func checkSPIRV(code []byte, entry string, numBindings, pushBytes int) ([]uint32, error) {
	if len(code) == 0 {
		return nil, fmt.Errorf("vulkan: empty SPIR-V module")
	}
	if len(code)%4 != 0 {
		return nil, fmt.Errorf("vulkan: SPIR-V module is %d bytes, not a multiple of 4", len(code))
	}
	if len(code) < 4*spirvHeaderWords {
		return nil, fmt.Errorf("vulkan: SPIR-V module is %d bytes, shorter than its 20-byte header", len(code))
	}
	switch m := binary.LittleEndian.Uint32(code); m {
	case spirvMagic:
	case 0x03022307:
		return nil, fmt.Errorf("vulkan: big-endian SPIR-V is not supported")
	default:
		return nil, fmt.Errorf("vulkan: not a SPIR-V module (magic 0x%08x, want 0x%08x)", m, spirvMagic)
	}
	words := make([]uint32, len(code)/4)
	for i := range words {
		words[i] = binary.LittleEndian.Uint32(code[4*i:])
	}

	type binding struct {
		set, binding uint32
		hasSet       bool
		hasBinding   bool
	}
	var (
		entries     []string // GLCompute entry point names
		found       bool
		decorated   = map[uint32]*binding{}
		bufferBlock = map[uint32]bool{} // struct ids decorated BufferBlock
		structs     = map[uint32]bool{}
		pointee     = map[uint32]uint32{}    // pointer type id -> pointee type id
		varType     = map[uint32]uint32{}    // variable id -> its pointer type id
		varClass    = map[uint32]uint32{}    // variable id -> storage class
		scalarSize  = map[uint32]uint32{}    // int or float type id -> bytes
		members     = map[uint32][]uint32{}  // struct id -> member type ids
		memberOff   = map[[2]uint32]uint32{} // struct id, member -> Offset decoration
		pushVars    []uint32
	)
	for i := spirvHeaderWords; i < len(words); {
		n := int(words[i] >> 16)
		op := words[i] & 0xffff
		if n == 0 || i+n > len(words) {
			return nil, fmt.Errorf("vulkan: malformed SPIR-V: instruction %d at word %d has word count %d (module has %d words)", op, i, n, len(words))
		}
		ins := words[i : i+n]
		switch op {
		case opEntryPoint:
			if n >= 4 && ins[1] == execGLCompute {
				name := literalString(ins[3:])
				entries = append(entries, name)
				found = found || name == entry
			}
		case opDecorate:
			if n >= 3 {
				switch ins[2] {
				case decBinding, decDescriptorSet:
					if n < 4 {
						break
					}
					b := decorated[ins[1]]
					if b == nil {
						b = &binding{}
						decorated[ins[1]] = b
					}
					if ins[2] == decBinding {
						b.binding, b.hasBinding = ins[3], true
					} else {
						b.set, b.hasSet = ins[3], true
					}
				case decBufferBlock:
					bufferBlock[ins[1]] = true
				}
			}
		case opMemberDecorate:
			if n >= 5 && ins[3] == decOffset {
				memberOff[[2]uint32{ins[1], ins[2]}] = ins[4]
			}
		case opTypeInt, opTypeFloat:
			if n >= 3 {
				scalarSize[ins[1]] = ins[2] / 8
			}
		case opTypeStruct:
			if n >= 2 {
				structs[ins[1]] = true
				members[ins[1]] = ins[2:]
			}
		case opTypePointer:
			if n >= 4 {
				pointee[ins[1]] = ins[3]
			}
		case opVariable:
			if n >= 4 {
				varType[ins[2]] = ins[1]
				varClass[ins[2]] = ins[3]
				if ins[3] == scPushConstant {
					pushVars = append(pushVars, ins[2])
				}
			}
		}
		i += n
	}
	if !found {
		sort.Strings(entries)
		has := "none"
		if len(entries) > 0 {
			has = strings.Join(entries, ", ")
		}
		return nil, fmt.Errorf("vulkan: SPIR-V module has no GLCompute entry point %q (it has: %s)", entry, has)
	}
	switch {
	case len(pushVars) > 0 && pushBytes == 0:
		return nil, fmt.Errorf("vulkan: shader declares push constants; the pipeline layout has none")
	case len(pushVars) > 1:
		return nil, fmt.Errorf("vulkan: shader declares %d push-constant blocks; a pipeline takes one", len(pushVars))
	case len(pushVars) == 1:
		t := pointee[varType[pushVars[0]]]
		if !structs[t] {
			return nil, fmt.Errorf("vulkan: shader's push constants are not a block")
		}
		end := uint64(0)
		for m, mt := range members[t] {
			size, ok := scalarSize[mt]
			off, hasOff := memberOff[[2]uint32{t, uint32(m)}]
			if !ok || !hasOff {
				return nil, fmt.Errorf("vulkan: shader's push-constant block member %d is not a scalar at a fixed offset; only scalar members are supported", m)
			}
			end = max(end, uint64(off)+uint64(size))
		}
		if end > uint64(pushBytes) {
			return nil, fmt.Errorf("vulkan: shader's push-constant block is %d bytes; the pipeline layout has %d", end, pushBytes)
		}
	}
	ids := make([]uint32, 0, len(decorated))
	for id := range decorated {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(a, b int) bool { return ids[a] < ids[b] })
	for _, id := range ids {
		b := decorated[id]
		if _, isVar := varClass[id]; !isVar {
			continue // a decoration on something else (should not happen)
		}
		if b.set != 0 || b.binding >= uint32(numBindings) {
			return nil, fmt.Errorf("vulkan: shader uses descriptor set %d binding %d; the pipeline has set 0 with %d bindings", b.set, b.binding, numBindings)
		}
		t := pointee[varType[id]]
		switch varClass[id] {
		case scStorageBuffer:
			if !structs[t] {
				return nil, fmt.Errorf("vulkan: shader binding %d is an array of buffers; only single storage buffers are supported", b.binding)
			}
		case scUniform:
			if !structs[t] {
				return nil, fmt.Errorf("vulkan: shader binding %d is an array of buffers; only single storage buffers are supported", b.binding)
			}
			if !bufferBlock[t] {
				return nil, fmt.Errorf("vulkan: shader binding %d is a uniform buffer; only storage buffers are supported", b.binding)
			}
		default:
			return nil, fmt.Errorf("vulkan: shader binding %d is not a storage buffer (SPIR-V storage class %d); only storage buffers are supported", b.binding, varClass[id])
		}
	}
	return words, nil
}

// literalString decodes a SPIR-V literal string (UTF-8, NUL-terminated,
// packed little-endian into words).
func literalString(w []uint32) string {
	var sb strings.Builder
	for _, x := range w {
		for k := 0; k < 4; k++ {
			c := byte(x >> (8 * k))
			if c == 0 {
				return sb.String()
			}
			sb.WriteByte(c)
		}
	}
	return sb.String()
}
