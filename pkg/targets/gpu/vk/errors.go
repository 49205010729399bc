package vk

import (
	"errors"
	"runtime"
	"strconv"
)

// Errors that say the machine cannot run Vulkan compute at all, as opposed
// to a call that failed. Test with errors.Is.
var (
	// ErrNoLoader: libvulkan.so.1 (the Vulkan loader) could not be loaded.
	ErrNoLoader = errors.New("vulkan: libvulkan.so.1 not found (install libvulkan1 and a driver, e.g. mesa-vulkan-drivers)")
	// ErrNoDevice: the loader is there but no physical device has a compute
	// queue (often: no driver installed).
	ErrNoDevice = errors.New("vulkan: no device with a compute queue")
	// ErrUnsupported: this build of the package has no Vulkan runtime.
	ErrUnsupported = errors.New("vulkan runtime not supported on " + runtime.GOOS + "/" + runtime.GOARCH)
	// ErrClosed: the Device was closed.
	ErrClosed = errors.New("vulkan: device is closed")
	// ErrFreed: the Buffer, Pipeline or Commands (or one a Commands uses) was
	// freed.
	ErrFreed = errors.New("vulkan: object was freed")
)

// Result is a VkResult, the status most Vulkan calls return.
type Result int32

// The VkResult values callers may want to test for (Error.Code).
const (
	Success                   Result = 0
	NotReady                  Result = 1
	Timeout                   Result = 2
	Incomplete                Result = 5
	ErrorOutOfHostMemory      Result = -1
	ErrorOutOfDeviceMemory    Result = -2
	ErrorInitializationFailed Result = -3
	ErrorDeviceLost           Result = -4
	ErrorMemoryMapFailed      Result = -5
	ErrorLayerNotPresent      Result = -6
	ErrorExtensionNotPresent  Result = -7
	ErrorFeatureNotPresent    Result = -8
	ErrorIncompatibleDriver   Result = -9
	ErrorTooManyObjects       Result = -10
	ErrorFormatNotSupported   Result = -11
	ErrorFragmentedPool       Result = -12
	ErrorUnknown              Result = -13
	ErrorOutOfPoolMemory      Result = -1000069000
	ErrorFragmentation        Result = -1000161000
	ErrorInvalidShaderNV      Result = -1000012000
)

var resultNames = map[Result]string{
	Success:                   "VK_SUCCESS",
	NotReady:                  "VK_NOT_READY",
	Timeout:                   "VK_TIMEOUT",
	3:                         "VK_EVENT_SET",
	4:                         "VK_EVENT_RESET",
	Incomplete:                "VK_INCOMPLETE",
	ErrorOutOfHostMemory:      "VK_ERROR_OUT_OF_HOST_MEMORY",
	ErrorOutOfDeviceMemory:    "VK_ERROR_OUT_OF_DEVICE_MEMORY",
	ErrorInitializationFailed: "VK_ERROR_INITIALIZATION_FAILED",
	ErrorDeviceLost:           "VK_ERROR_DEVICE_LOST",
	ErrorMemoryMapFailed:      "VK_ERROR_MEMORY_MAP_FAILED",
	ErrorLayerNotPresent:      "VK_ERROR_LAYER_NOT_PRESENT",
	ErrorExtensionNotPresent:  "VK_ERROR_EXTENSION_NOT_PRESENT",
	ErrorFeatureNotPresent:    "VK_ERROR_FEATURE_NOT_PRESENT",
	ErrorIncompatibleDriver:   "VK_ERROR_INCOMPATIBLE_DRIVER",
	ErrorTooManyObjects:       "VK_ERROR_TOO_MANY_OBJECTS",
	ErrorFormatNotSupported:   "VK_ERROR_FORMAT_NOT_SUPPORTED",
	ErrorFragmentedPool:       "VK_ERROR_FRAGMENTED_POOL",
	ErrorUnknown:              "VK_ERROR_UNKNOWN",
	ErrorOutOfPoolMemory:      "VK_ERROR_OUT_OF_POOL_MEMORY",
	-1000072003:               "VK_ERROR_INVALID_EXTERNAL_HANDLE",
	ErrorFragmentation:        "VK_ERROR_FRAGMENTATION",
	-1000257000:               "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS",
	1000297000:                "VK_PIPELINE_COMPILE_REQUIRED",
	-1000011001:               "VK_ERROR_VALIDATION_FAILED_EXT",
	ErrorInvalidShaderNV:      "VK_ERROR_INVALID_SHADER_NV",
	-1000174001:               "VK_ERROR_NOT_PERMITTED_KHR",
	-1000338000:               "VK_ERROR_COMPRESSION_EXHAUSTED_EXT",
}

// String is the result's name from vulkan_core.h, e.g.
// "VK_ERROR_DEVICE_LOST", or "VkResult(<n>)" for a value it does not know.
func (r Result) String() string {
	if s, ok := resultNames[r]; ok {
		return s
	}
	return "VkResult(" + strconv.Itoa(int(r)) + ")"
}

// Error is a failed Vulkan call: "vulkan: <Op>: <VkResult name>[: <Hint>]".
type Error struct {
	Op   string // the C function, e.g. "vkAllocateMemory"
	Code Result // the VkResult
	Hint string // what it probably means, when there is something to say
}

func (e *Error) Error() string {
	s := "vulkan: " + e.Op + ": " + e.Code.String()
	if e.Hint != "" {
		s += ": " + e.Hint
	}
	return s
}
