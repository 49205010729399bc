package vk

// Dispatch is one compute dispatch in a command sequence (see
// [Device.Record]).
type Dispatch struct {
	Pipeline *Pipeline
	Buffers  []*Buffer // binding i -> Buffers[i], the whole buffer
	Groups   [3]uint32 // vkCmdDispatch group counts
	Push     []byte    // the push constants, as many bytes as the pipeline's range (recorded, so reused by every Run)
}

// Limits are the device limits that matter to compute kernels (from
// VkPhysicalDeviceLimits).
type Limits struct {
	MaxStorageBufferRange               uint32    // largest buffer a binding may cover, bytes
	MaxPerStageDescriptorStorageBuffers uint32    // most bindings a pipeline may have
	MaxComputeSharedMemorySize          uint32    // shared (workgroup) memory, bytes
	MaxComputeWorkGroupCount            [3]uint32 // largest Dispatch.Groups
	MaxComputeWorkGroupInvocations      uint32    // largest local_size_x*y*z
	MaxComputeWorkGroupSize             [3]uint32 // largest local_size_x, y, z
	MaxMemoryAllocationCount            uint32    // each Buffer is one allocation
	MinStorageBufferOffsetAlignment     uint64
	MaxPushConstantsSize                uint32 // bytes of push constants a pipeline may take (128 or more)
}

// The optional device features Open enables when the device has them, by
// their Vulkan names; [Device.Features] lists the enabled ones.
const (
	FeatureShaderFloat16                      = "shaderFloat16"
	FeatureShaderFloat64                      = "shaderFloat64"
	FeatureShaderInt8                         = "shaderInt8"
	FeatureShaderInt16                        = "shaderInt16"
	FeatureShaderInt64                        = "shaderInt64"
	FeatureStorageBuffer8BitAccess            = "storageBuffer8BitAccess"
	FeatureStorageBuffer16BitAccess           = "storageBuffer16BitAccess"
	FeatureUniformAndStorageBuffer8BitAccess  = "uniformAndStorageBuffer8BitAccess"
	FeatureUniformAndStorageBuffer16BitAccess = "uniformAndStorageBuffer16BitAccess"
)
