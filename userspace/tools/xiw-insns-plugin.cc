// SPDX-License-Identifier: GPL-2.0
//
// xiw-insns-plugin: a QEMU TCG plugin that counts the guest kernel's
// executed instructions per translation block.  Each time guest code at
// the mark address runs (xiw-insns-mark), it writes the counts so far to
// OUT.N (N = 0, 1, ...: one "vaddr instructions executions" line per
// block that ran, vaddr in hex) and starts counting afresh.
//
//   qemu-system-x86_64 ... -plugin xiw-insns-plugin.so,mark=ADDR,out=OUT
//
// Only blocks at kernel addresses (the upper half) are counted.  The
// counters are plain additions inlined into the translated code, as QEMU
// offers them: two vCPUs adding to one block's counter at the same
// instant can lose one of the two, which is rare and shows as a few
// instructions in thousands.  tests/vm/bench-focus (BENCH_INSNS) loads
// it; xiw-insns-report reads what it writes.
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "xiw_qemu_plugin.h"

extern "C" {
__attribute__((visibility("default"))) int qemu_plugin_version = 1;
__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
		    char **argv);
}

namespace {

struct Block {
	std::uint64_t vaddr;
	std::uint64_t insns;
	std::uint64_t execs;	// added to by the translated code
};

constexpr std::uint64_t kKernelBase = 0xffff800000000000ULL;

std::mutex lock;	// the table and the dump sequence
// Keyed by address and size: a block retranslated with another length
// is another block.  Entries live as long as QEMU: the translated code
// holds pointers to their counters.
std::map<std::pair<std::uint64_t, std::uint64_t>, std::unique_ptr<Block>> blocks;
std::uint64_t mark;
std::string out = "xiw-insns";
unsigned seq;

void dump(unsigned int, void *)
{
	std::lock_guard<std::mutex> g(lock);
	std::string path = out + "." + std::to_string(seq++);
	std::FILE *f = std::fopen(path.c_str(), "w");

	for (auto &[key, b] : blocks) {
		if (b->execs && f)
			std::fprintf(f, "%llx %llu %llu\n",
				     (unsigned long long)b->vaddr,
				     (unsigned long long)b->insns,
				     (unsigned long long)b->execs);
		b->execs = 0;
	}
	if (f)
		std::fclose(f);
	else
		std::fprintf(stderr, "xiw-insns-plugin: cannot write %s\n", path.c_str());
}

void translated(qemu_plugin_id_t, qemu_plugin_tb *tb)
{
	std::uint64_t va = qemu_plugin_tb_vaddr(tb);
	std::uint64_t n = qemu_plugin_tb_n_insns(tb);

	if (va == mark) {
		qemu_plugin_register_vcpu_tb_exec_cb(tb, dump, QEMU_PLUGIN_CB_NO_REGS,
						     nullptr);
		return;
	}
	if (va < kKernelBase)
		return;
	Block *b;
	{
		std::lock_guard<std::mutex> g(lock);
		auto &slot = blocks[{ va, n }];
		if (!slot)
			slot = std::make_unique<Block>(Block{va, n, 0});
		b = slot.get();
	}
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
}

} // namespace

int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *, int argc,
			char **argv)
{
	for (int i = 0; i < argc; i++) {
		std::string a = argv[i];

		if (a.starts_with("mark=")) {
			mark = std::strtoull(a.c_str() + 5, nullptr, 0);
		} else if (a.starts_with("out=")) {
			out = a.substr(4);
		} else {
			std::fprintf(stderr, "xiw-insns-plugin: unknown argument '%s'\n",
				     a.c_str());
			return -1;
		}
	}
	if (!mark) {
		std::fprintf(stderr, "xiw-insns-plugin: mark=ADDR is required\n");
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
	return 0;
}
