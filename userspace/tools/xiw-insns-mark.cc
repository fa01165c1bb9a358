// SPDX-License-Identifier: GPL-2.0
//
// xiw-insns-mark: run in a guest under xiw-insns-plugin, its entry point
// is the plugin's mark: the plugin writes the instruction counts so far.
// It does nothing else and exits 0.  Linked static, at a fixed address no
// other program of the guest uses (see CMakeLists.txt), without the C
// library: the entry point is the first code that runs.
extern "C" [[noreturn]] void _start()
{
	asm volatile("mov $60, %%eax\n\txor %%edi, %%edi\n\tsyscall" ::: "memory");
	__builtin_unreachable();
}
