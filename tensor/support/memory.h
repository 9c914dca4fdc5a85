// Keeping freed memory for the next step: an opt-in tuning of glibc's malloc that a program makes,
// once, at the start of main. The library itself never calls it: linking gradformer changes
// nothing about a process's malloc.
//
// Why. A training step frees and allocates the same tensors, of the same sizes, every step. glibc's
// malloc, by default, serves blocks above a threshold (128 KiB at first, then the largest block freed
// so far) with fresh pages from the kernel, and gives the free memory at the top of its heap back to
// the kernel once it passes twice that threshold. Each step then starts on fresh pages, and the first
// write to each page is a page fault that zero-fills it: on the copy task at d_model 128, 7,400
// faults a step and 15% of a one-thread run's time in the kernel (gradformer train --task copy
// --threads 1: 3.5 s of system time in 20 s). Raising both thresholds keeps that memory in the heap
// for the next step: 24,000 faults in the whole run, and the same peak resident memory (the freed
// memory is reused, not added to). Chapter 18's exercise 3 measures it.
#pragma once

namespace gradformer {

/// Asks glibc's malloc to keep freed memory for reuse: blocks up to 32 MiB come from the heap rather
/// than from fresh pages (M_MMAP_THRESHOLD), and free heap is given back to the kernel only beyond
/// 1 GiB (M_TRIM_THRESHOLD), through mallopt. Returns whether it took effect: false, changing
/// nothing, with a C library other than glibc, or when the environment tunes malloc already
/// (GLIBC_TUNABLES or any MALLOC_... variable, such as MALLOC_TOP_PAD_: the user's settings win), or
/// when malloc refuses (a sanitizer's malloc). Call it before the first tensor, from one thread;
/// calling it again changes nothing more.
bool keep_freed_memory();

}  // namespace gradformer
