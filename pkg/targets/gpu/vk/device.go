//go:build (linux || (freebsd && cgo)) && (amd64 || arm64)

package vk

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"unsafe"
)

// Device is a Vulkan logical device with one compute queue, and everything
// created from it. Its methods, and those of the objects it makes, may be
// called from several goroutines.
//
// Locks, always taken in this order: life (RLock by every method that makes
// Vulkan calls on the device, Lock by Close), Commands.mu, mu (the object
// sets, reference counts and every destruction), Buffer.mu. queueMu guards
// the queue alone.
type Device struct {
	in instanceFns
	fn deviceFns

	instance uintptr // VkInstance
	phys     uintptr // VkPhysicalDevice
	dev      uintptr // VkDevice
	queue    uintptr // VkQueue
	family   uint32  // the queue's family

	name     string
	devType  uint32
	api      uint32 // the Vulkan version in use: min(instance, device)
	devAPI   uint32 // the device's own apiVersion, patch included
	features []string
	limits   Limits
	memProps physicalDeviceMemoryProperties

	life   sync.RWMutex
	closed bool // guarded by life

	mu        sync.Mutex
	gone      bool // the VkDevice is destroyed; guarded by mu
	buffers   map[*Buffer]struct{}
	pipelines map[*Pipeline]struct{}
	commands  map[*Commands]struct{}

	queueMu sync.Mutex // a VkQueue is externally synchronized
}

// check turns a VkResult into nil (VK_SUCCESS) or an *Error.
func check(op string, r int32) error {
	if r == 0 {
		return nil
	}
	return &Error{Op: op, Code: Result(r)}
}

// cString returns s as a NUL-terminated byte slice.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

// goString reads a NUL-terminated C string out of a fixed-size char array.
func goString(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}

func versionString(v uint32) string {
	return fmt.Sprintf("%d.%d.%d", v>>22&0x7f, v>>12&0x3ff, v&0xfff)
}

// Open loads libvulkan, creates a Vulkan 1.1+ instance (no layers, no
// extensions) and a logical device with one compute queue on the first
// physical device that has one; RLX_VULKAN_DEVICE=<index> picks the physical
// device instead (its index in vkEnumeratePhysicalDevices order). It enables
// the optional features kernels may use when the device has them (see
// [Device.Features]).
//
// Without the loader the error is ErrNoLoader, without a usable device
// ErrNoDevice (test with errors.Is).
func Open() (*Device, error) {
	l, err := loadLibrary()
	if err != nil {
		return nil, err
	}
	tooOld := errors.New("vulkan: the Vulkan loader (libvulkan.so.1) only supports Vulkan 1.0; rlx needs 1.1 or newer")
	if l.enumerateInstanceVersion == nil {
		return nil, tooOld
	}
	var iv uint32
	if err := check("vkEnumerateInstanceVersion", l.enumerateInstanceVersion(&iv)); err != nil {
		return nil, err
	}
	iv &^= 0xfff
	if iv < apiVersion11 {
		return nil, tooOld
	}
	d := &Device{
		api:       min(iv, apiVersion13),
		buffers:   map[*Buffer]struct{}{},
		pipelines: map[*Pipeline]struct{}{},
		commands:  map[*Commands]struct{}{},
	}
	ok := false
	defer func() {
		if !ok {
			if d.dev != 0 && d.fn.destroyDevice != nil {
				d.fn.destroyDevice(d.dev, nil)
			}
			if d.instance != 0 && d.in.destroyInstance != nil {
				d.in.destroyInstance(d.instance, nil)
			}
		}
	}()
	if err := d.createInstance(l); err != nil {
		return nil, err
	}
	if err := d.pickDevice(); err != nil {
		return nil, err
	}
	if err := d.createDevice(); err != nil {
		return nil, err
	}
	ok = true
	return d, nil
}

func (d *Device) createInstance(l *library) error {
	name := cString("rlx")
	app := &applicationInfo{
		sType:            stApplicationInfo,
		pApplicationName: &name[0],
		pEngineName:      &name[0],
		apiVersion:       d.api,
	}
	info := &instanceCreateInfo{sType: stInstanceCreateInfo, pApplicationInfo: app}
	var pin runtime.Pinner
	defer pin.Unpin()
	pin.Pin(app)
	pin.Pin(&name[0])
	r := l.createInstance(info, nil, &d.instance)
	if Result(r) == ErrorIncompatibleDriver {
		return fmt.Errorf("%w (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER: no Vulkan driver is installed; install one, e.g. mesa-vulkan-drivers)", ErrNoDevice)
	}
	if err := check("vkCreateInstance", r); err != nil {
		return err
	}
	return bind(d.in.table(), func(n string) uintptr { return l.getInstanceProcAddr(d.instance, n) })
}

// pickDevice chooses the physical device and its compute queue family, and
// reads its properties.
func (d *Device) pickDevice() error {
	var n uint32
	if err := check("vkEnumeratePhysicalDevices", d.in.enumeratePhysicalDevices(d.instance, &n, nil)); err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w (the Vulkan loader found no devices; install a driver, e.g. mesa-vulkan-drivers)", ErrNoDevice)
	}
	pds := make([]uintptr, n)
	if r := d.in.enumeratePhysicalDevices(d.instance, &n, &pds[0]); r != 0 && Result(r) != Incomplete {
		return check("vkEnumeratePhysicalDevices", r)
	}
	pds = pds[:n]
	want := -1
	if s := os.Getenv("RLX_VULKAN_DEVICE"); s != "" {
		i, err := strconv.Atoi(s)
		if err != nil || i < 0 || i >= len(pds) {
			return fmt.Errorf("vulkan: RLX_VULKAN_DEVICE=%q: want a device index from 0 to %d", s, len(pds)-1)
		}
		want = i
	}
	for i, pd := range pds {
		if want >= 0 && i != want {
			continue
		}
		var props physicalDeviceProperties
		d.in.getPhysicalDeviceProperties(pd, &props)
		fam, ok := d.computeFamily(pd)
		if !ok {
			if want >= 0 {
				return fmt.Errorf("%w: RLX_VULKAN_DEVICE=%d (%s) has none", ErrNoDevice, want, goString(props.deviceName[:]))
			}
			continue
		}
		d.phys, d.family = pd, fam
		d.name = goString(props.deviceName[:])
		d.devType = props.deviceType
		d.devAPI = props.apiVersion
		d.api = min(d.api, props.apiVersion&^0xfff)
		lim := &props.limits
		d.limits = Limits{
			MaxStorageBufferRange:               lim.maxStorageBufferRange,
			MaxPerStageDescriptorStorageBuffers: lim.maxPerStageDescriptorStorageBuffers,
			MaxComputeSharedMemorySize:          lim.maxComputeSharedMemorySize,
			MaxComputeWorkGroupCount:            lim.maxComputeWorkGroupCount,
			MaxComputeWorkGroupInvocations:      lim.maxComputeWorkGroupInvocations,
			MaxComputeWorkGroupSize:             lim.maxComputeWorkGroupSize,
			MaxMemoryAllocationCount:            lim.maxMemoryAllocationCount,
			MinStorageBufferOffsetAlignment:     lim.minStorageBufferOffsetAlignment,
			MaxPushConstantsSize:                lim.maxPushConstantsSize,
		}
		d.in.getPhysicalDeviceMemoryProperties(pd, &d.memProps)
		return nil
	}
	return ErrNoDevice
}

// computeFamily returns the first queue family of pd with a compute queue.
func (d *Device) computeFamily(pd uintptr) (uint32, bool) {
	var n uint32
	d.in.getPhysicalDeviceQueueFamilyProperties(pd, &n, nil)
	if n == 0 {
		return 0, false
	}
	fams := make([]queueFamilyProperties, n)
	d.in.getPhysicalDeviceQueueFamilyProperties(pd, &n, &fams[0])
	for i, f := range fams[:n] {
		if f.queueFlags&queueComputeBit != 0 && f.queueCount > 0 {
			return uint32(i), true
		}
	}
	return 0, false
}

// deviceExtensions lists the names of pd's device extensions.
func (d *Device) deviceExtensions() (map[string]bool, error) {
	var n uint32
	if err := check("vkEnumerateDeviceExtensionProperties", d.in.enumerateDeviceExtensionProperties(d.phys, nil, &n, nil)); err != nil {
		return nil, err
	}
	has := map[string]bool{}
	if n == 0 {
		return has, nil
	}
	props := make([]extensionProperties, n)
	if r := d.in.enumerateDeviceExtensionProperties(d.phys, nil, &n, &props[0]); r != 0 && Result(r) != Incomplete {
		return nil, check("vkEnumerateDeviceExtensionProperties", r)
	}
	for _, p := range props[:n] {
		has[goString(p.extensionName[:])] = true
	}
	return has, nil
}

// featureChain holds every feature struct Open may chain behind a
// VkPhysicalDeviceFeatures2; which ones are linked depends on the version.
// The pNext pointers point into the same object, so pinning it pins the
// whole chain.
type featureChain struct {
	f2    physicalDeviceFeatures2
	v11   physicalDeviceVulkan11Features
	v12   physicalDeviceVulkan12Features
	s16   physicalDevice16BitStorageFeatures
	s8    physicalDevice8BitStorageFeatures
	f16i8 physicalDeviceShaderFloat16Int8Features
}

// link sets the sTypes and links the structs used for api (with the
// extension structs has allows on 1.1).
func (c *featureChain) link(api uint32, has8bit, hasF16I8 bool) {
	c.f2.sType = stPhysicalDeviceFeatures2
	c.v11.sType = stPhysicalDeviceVulkan11Features
	c.v12.sType = stPhysicalDeviceVulkan12Features
	c.s16.sType = stPhysicalDevice16BitStorageFeature
	c.s8.sType = stPhysicalDevice8BitStorageFeatures
	c.f16i8.sType = stPhysicalDeviceShaderFloat16Int8
	if api >= apiVersion12 {
		c.f2.pNext = unsafe.Pointer(&c.v11)
		c.v11.pNext = unsafe.Pointer(&c.v12)
		return
	}
	// 1.1: 16-bit storage is core; 8-bit storage and float16/int8 are
	// extensions.
	c.f2.pNext = unsafe.Pointer(&c.s16)
	tail := &c.s16.pNext
	if has8bit {
		*tail = unsafe.Pointer(&c.s8)
		tail = &c.s8.pNext
	}
	if hasF16I8 {
		*tail = unsafe.Pointer(&c.f16i8)
	}
}

// enable copies the wanted features that sup has into c (linked the same
// way) and returns their names.
func (c *featureChain) enable(sup *featureChain, api uint32) []string {
	var names []string
	set := func(dst *uint32, src uint32, name string) {
		if src != 0 {
			*dst = 1
			names = append(names, name)
		}
	}
	f, s := &c.f2.features, &sup.f2.features
	set(&f[pdfShaderFloat64], s[pdfShaderFloat64], FeatureShaderFloat64)
	set(&f[pdfShaderInt64], s[pdfShaderInt64], FeatureShaderInt64)
	set(&f[pdfShaderInt16], s[pdfShaderInt16], FeatureShaderInt16)
	switch {
	case api >= apiVersion12:
		set(&c.v11.storageBuffer16BitAccess, sup.v11.storageBuffer16BitAccess, FeatureStorageBuffer16BitAccess)
		set(&c.v11.uniformAndStorageBuffer16BitAccess, sup.v11.uniformAndStorageBuffer16BitAccess, FeatureUniformAndStorageBuffer16BitAccess)
		set(&c.v12.b[v12StorageBuffer8BitAccess], sup.v12.b[v12StorageBuffer8BitAccess], FeatureStorageBuffer8BitAccess)
		set(&c.v12.b[v12UniformAndStorageBuffer8BitAccess], sup.v12.b[v12UniformAndStorageBuffer8BitAccess], FeatureUniformAndStorageBuffer8BitAccess)
		set(&c.v12.b[v12ShaderFloat16], sup.v12.b[v12ShaderFloat16], FeatureShaderFloat16)
		set(&c.v12.b[v12ShaderInt8], sup.v12.b[v12ShaderInt8], FeatureShaderInt8)
	case api >= apiVersion11:
		set(&c.s16.storageBuffer16BitAccess, sup.s16.storageBuffer16BitAccess, FeatureStorageBuffer16BitAccess)
		set(&c.s16.uniformAndStorageBuffer16BitAccess, sup.s16.uniformAndStorageBuffer16BitAccess, FeatureUniformAndStorageBuffer16BitAccess)
		set(&c.s8.storageBuffer8BitAccess, sup.s8.storageBuffer8BitAccess, FeatureStorageBuffer8BitAccess)
		set(&c.s8.uniformAndStorageBuffer8BitAccess, sup.s8.uniformAndStorageBuffer8BitAccess, FeatureUniformAndStorageBuffer8BitAccess)
		set(&c.f16i8.shaderFloat16, sup.f16i8.shaderFloat16, FeatureShaderFloat16)
		set(&c.f16i8.shaderInt8, sup.f16i8.shaderInt8, FeatureShaderInt8)
	}
	sort.Strings(names)
	return names
}

// createDevice creates the logical device with the features enabled, and
// loads the device functions.
func (d *Device) createDevice() error {
	has, err := d.deviceExtensions()
	if err != nil {
		return err
	}
	var pin runtime.Pinner
	defer pin.Unpin()

	var exts []string
	has8bit := d.api < apiVersion12 && has["VK_KHR_8bit_storage"]
	hasF16I8 := d.api < apiVersion12 && has["VK_KHR_shader_float16_int8"]
	sup, en := new(featureChain), new(featureChain)
	pin.Pin(sup)
	pin.Pin(en)
	if d.api >= apiVersion11 && d.in.getPhysicalDeviceFeatures2 != nil {
		sup.link(d.api, has8bit, hasF16I8)
		d.in.getPhysicalDeviceFeatures2(d.phys, &sup.f2)
		// On 1.1, chain (and enable) an extension's struct only when the
		// device has a feature in it.
		has8bit = has8bit && sup.s8.storageBuffer8BitAccess|sup.s8.uniformAndStorageBuffer8BitAccess != 0
		hasF16I8 = hasF16I8 && sup.f16i8.shaderFloat16|sup.f16i8.shaderInt8 != 0
		en.link(d.api, has8bit, hasF16I8)
		if has8bit {
			exts = append(exts, "VK_KHR_8bit_storage")
		}
		if hasF16I8 {
			exts = append(exts, "VK_KHR_shader_float16_int8")
		}
	} else {
		d.api = apiVersion10
		d.in.getPhysicalDeviceFeatures(d.phys, &sup.f2.features)
	}
	d.features = en.enable(sup, d.api)
	// A device that is a portability subset (MoltenVK and friends) must have
	// that extension enabled.
	if has["VK_KHR_portability_subset"] {
		exts = append(exts, "VK_KHR_portability_subset")
	}

	prio := new(float32)
	*prio = 1
	pin.Pin(prio)
	qci := &deviceQueueCreateInfo{
		sType:            stDeviceQueueCreateInfo,
		queueFamilyIndex: d.family,
		queueCount:       1,
		pQueuePriorities: prio,
	}
	pin.Pin(qci)
	info := &deviceCreateInfo{
		sType:                stDeviceCreateInfo,
		queueCreateInfoCount: 1,
		pQueueCreateInfos:    qci,
	}
	if d.api >= apiVersion11 {
		info.pNext = unsafe.Pointer(&en.f2)
	} else {
		info.pEnabledFeatures = &en.f2.features
	}
	if len(exts) > 0 {
		names := make([]*byte, len(exts))
		for i, e := range exts {
			c := cString(e)
			pin.Pin(&c[0])
			names[i] = &c[0]
		}
		pin.Pin(&names[0])
		info.enabledExtensionCount = uint32(len(exts))
		info.ppEnabledExtensionNames = unsafe.Pointer(&names[0])
	}
	if err := check("vkCreateDevice", d.in.createDevice(d.phys, info, nil, &d.dev)); err != nil {
		return err
	}
	if err := bind(d.fn.table(), func(n string) uintptr { return d.in.getDeviceProcAddr(d.dev, n) }); err != nil {
		return err
	}
	d.fn.getDeviceQueue(d.dev, d.family, 0, &d.queue)
	return nil
}

// Name is the device's name (VkPhysicalDeviceProperties.deviceName), e.g.
// "llvmpipe (LLVM 15.0.6, 256 bits)".
func (d *Device) Name() string { return d.name }

// Type is the kind of device: "discrete-gpu", "integrated-gpu",
// "virtual-gpu", "cpu" or "other".
func (d *Device) Type() string {
	switch d.devType {
	case 1:
		return "integrated-gpu"
	case 2:
		return "discrete-gpu"
	case 3:
		return "virtual-gpu"
	case 4:
		return "cpu"
	}
	return "other"
}

// APIVersion is the Vulkan version the device reports, e.g. "1.3.230"; the
// package uses at most min(that, the loader's, 1.3).
func (d *Device) APIVersion() string { return versionString(d.devAPI) }

// Features lists the optional features Open enabled, by their Vulkan names
// (the Feature* constants), sorted.
func (d *Device) Features() []string { return append([]string(nil), d.features...) }

// HasFeature reports whether the optional feature name (a Feature*
// constant) is enabled.
func (d *Device) HasFeature(name string) bool {
	for _, f := range d.features {
		if f == name {
			return true
		}
	}
	return false
}

// Limits are the device's compute limits.
func (d *Device) Limits() Limits { return d.limits }

// Close waits for the device to go idle and destroys everything created
// from it (Buffers, Pipelines, Commands), then the device and the instance.
// It waits for Runs in progress. Closing twice is a no-op; after Close,
// every method returns ErrClosed (or ErrFreed) and Free is a no-op.
func (d *Device) Close() error {
	d.life.Lock()
	defer d.life.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	d.queueMu.Lock()
	err := check("vkDeviceWaitIdle", d.fn.deviceWaitIdle(d.dev))
	d.queueMu.Unlock()

	d.mu.Lock()
	defer d.mu.Unlock()
	for c := range d.commands {
		d.destroyCommands(c)
	}
	for p := range d.pipelines {
		p.freed.Store(true)
		d.destroyPipeline(p)
	}
	for b := range d.buffers {
		b.freed.Store(true)
		b.mu.Lock()
		b.data = nil
		b.mu.Unlock()
		d.destroyBuffer(b)
	}
	clear(d.commands)
	clear(d.pipelines)
	clear(d.buffers)
	d.fn.destroyDevice(d.dev, nil)
	d.in.destroyInstance(d.instance, nil)
	d.gone = true
	return err
}
