// Programmatic dependent launch (griddepcontrol, sm_90): a kernel launched with the
// programmatic-stream-serialization attribute may start while the kernel before it on the
// stream is still running; it does the work that reads nothing the earlier kernel writes
// (barrier set-up, tensor-map prefetch, its first work item from the layout lists), then
// waits for that kernel's completion and memory before touching its inputs and outputs.
// Used by the Hopper attention kernel (kernels/attention_hopper/) and its launcher.
// Invariants: every read of data a previous kernel may write, and every global write, comes
// after WaitPriorGrids in program order or through a barrier that orders after it. Both
// instructions are no-ops when the kernel was launched without the attribute.
#pragma once

namespace stof::kernels::hopper {

// Blocks until every prerequisite grid has completed and its memory operations are visible.
__device__ __forceinline__ void WaitPriorGrids() {
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
}

// Lets the dependent grid be scheduled once every CTA of this grid has called this or exited
// (a hint: the dependent still waits for this grid's completion in WaitPriorGrids).
__device__ __forceinline__ void LaunchDependentGrids() {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}

}  // namespace stof::kernels::hopper
