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
//
// With trace=1 it records instead, per vCPU, the sequence of blocks each
// one ran from the first mark on, and writes it at every mark to
// OUT.N.cpuC (C = the vCPU): one little-endian 64-bit word per block,
// the block's instruction count in the top 16 bits, the low 48 bits of
// its address below; a run of user-space blocks is one word of address 0
// (their instructions summed, up to 65535 a word).  xiw-insns-report
// --path reads these.  A callback per block: the guest runs several
// times slower than with the counters.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

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

// Trace mode: each vCPU appends to its own words under its own lock,
// which the mark's dump, on whichever vCPU ran the mark, takes to write
// them out.  A vCPU past kTraceVcpus is not traced.
constexpr unsigned kTraceVcpus = 16;
constexpr std::size_t kTraceMax = std::size_t(1) << 26;	// words per vCPU and dump
constexpr std::uint64_t kAddrMask = (std::uint64_t(1) << 48) - 1;

struct Trace {
	std::mutex lock;	// words, dropped
	std::vector<std::uint64_t> words;
	std::uint64_t dropped = 0;
};

bool trace;
std::atomic<bool> tracing;	// from the first mark on
Trace traces[kTraceVcpus];

// Trace mode's dump, under the plugin's lock (which guards @seq).
void dump_trace()
{
	for (unsigned c = 0; c < kTraceVcpus; c++) {
		std::string path = out + "." + std::to_string(seq) + ".cpu" + std::to_string(c);
		std::lock_guard<std::mutex> g(traces[c].lock);
		auto &t = traces[c];
		std::FILE *f;

		if (t.dropped)
			std::fprintf(stderr, "xiw-insns-plugin: %s: %llu blocks past %zu not recorded\n",
				     path.c_str(), (unsigned long long)t.dropped, kTraceMax);
		t.dropped = 0;
		if (t.words.empty())
			continue;
		f = std::fopen(path.c_str(), "wb");
		if (!f || std::fwrite(t.words.data(), sizeof(std::uint64_t), t.words.size(), f) !=
			  t.words.size())
			std::fprintf(stderr, "xiw-insns-plugin: cannot write %s\n", path.c_str());
		if (f)
			std::fclose(f);
		t.words.clear();
	}
	seq++;
	tracing = true;
}

void dump(unsigned int, void *)
{
	std::lock_guard<std::mutex> g(lock);

	if (trace) {
		dump_trace();
		return;
	}

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

// Trace mode: vCPU @vcpu ran a block whose record (see the top) is
// @word.  Its own lock is uncontended but while a mark writes it out.
void ran(unsigned int vcpu, void *word)
{
	std::uint64_t w = reinterpret_cast<std::uintptr_t>(word);

	if (vcpu >= kTraceVcpus || !tracing.load(std::memory_order_relaxed))
		return;

	auto &t = traces[vcpu];
	std::lock_guard<std::mutex> g(t.lock);
	auto &s = t.words;

	// A user-space block joins the user run before it.
	if (!(w & kAddrMask) && !s.empty() && !(s.back() & kAddrMask) &&
	    (s.back() >> 48) + (w >> 48) <= 0xffff) {
		s.back() += w;
		return;
	}
	if (s.size() >= kTraceMax) {
		t.dropped++;
		return;
	}
	s.push_back(w);
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
	if (trace) {
		std::uint64_t w = std::min<std::uint64_t>(n, 0xffff) << 48;

		if (va >= kKernelBase)
			w |= va & kAddrMask;
		qemu_plugin_register_vcpu_tb_exec_cb(tb, ran, QEMU_PLUGIN_CB_NO_REGS,
						     reinterpret_cast<void *>(std::uintptr_t(w)));
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
		} else if (a == "trace=1") {
			trace = true;
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
