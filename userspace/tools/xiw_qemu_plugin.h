/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's TCG plugin interface (plugin API version 1, QEMU 7.2
 * as Debian 12 ships it, which installs no header for it) that
 * xiw-insns-plugin uses, declared from its documentation.  QEMU resolves
 * these symbols in the plugin when it loads it; a QEMU whose oldest
 * supported API is newer refuses the plugin at load time.
 */
#ifndef XIW_QEMU_PLUGIN_H
#define XIW_QEMU_PLUGIN_H

#include <cstddef>
#include <cstdint>

extern "C" {

using qemu_plugin_id_t = std::uint64_t;
struct qemu_plugin_tb;	/* a translation block being translated */
struct qemu_info_t;	/* what QEMU tells the plugin at install (unused) */

enum qemu_plugin_cb_flags {
	QEMU_PLUGIN_CB_NO_REGS,
	QEMU_PLUGIN_CB_R_REGS,
	QEMU_PLUGIN_CB_RW_REGS,
};

enum qemu_plugin_op {
	QEMU_PLUGIN_INLINE_ADD_U64,
};

using qemu_plugin_vcpu_tb_trans_cb_t = void (*)(qemu_plugin_id_t id,
						struct qemu_plugin_tb *tb);
using qemu_plugin_vcpu_udata_cb_t = void (*)(unsigned int vcpu_index,
					     void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb,
					  qemu_plugin_vcpu_udata_cb_t cb,
					  enum qemu_plugin_cb_flags flags,
					  void *userdata);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb,
					      enum qemu_plugin_op op,
					      void *ptr, std::uint64_t imm);
std::size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
std::uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

}

#endif
