/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw: offload backends.  The data path asks its connection's backend for
 * the parts of iWARP a NIC can take over; the software backend (the
 * default) leaves every one of them to the CPU.  A hardware driver, or a
 * test module, registers its own backend with xiw_offload_register() and
 * an administrator selects it per device (/sys/class/infiniband/DEV/
 * offload).  See Documentation/offload.rst.
 */
#ifndef _XIW_OFFLOAD_H
#define _XIW_OFFLOAD_H

#include <linux/list.h>
#include <linux/module.h>
#include <linux/types.h>

#include "xiw_proto.h"

struct net_device;
struct xiw_device;

/* Longest backend name, NUL included. */
#define XIW_OFFLOAD_NAME_MAX	16

/**
 * struct xiw_offload_conn - what a backend learns of a connection
 * @ibdev: name of the xiw device
 * @netdev: the netdev the connection's TCP socket runs over, referenced
 *	for the call only
 * @qpn: QP number
 * @mpa: the agreed MPA parameters
 * @priv: the backend's own per-connection state, set by @conn_start
 */
struct xiw_offload_conn {
	const char *ibdev;
	struct net_device *netdev;
	u32 qpn;
	const struct xiw_mpa_params *mpa;
	void *priv;
};

/**
 * struct xiw_offload_ops - one offload backend
 * @name: what the device's "offload" attribute selects it by
 * @owner: the module providing it; a connection holds a reference for as
 *	long as it uses the backend
 * @list: entry in the registry (xiw_offload.c)
 * @conn_start: transport hand-off: the connection has left MPA and is
 *	about to carry DDP.  Return 0 to take it (the other hooks are then
 *	called for it), or an errno to leave it to software, which then
 *	serves the connection as if no backend were selected.  Process
 *	context; may sleep.
 * @conn_stop: the connection is torn down (after @conn_start returned 0).
 *	Process context; may sleep.
 * @crc32c: CRC provider: feed @len octets at @p into the running MPA CRC
 *	@crc (RFC 5044: CRC32c, as xiw_crc_update()); NULL: software.  Called
 *	in the transmit engine (process context) and in socket receive
 *	(softirq): must not sleep.
 * @tx_mulpdu: FPDU segmentation: the largest FPDU (ULPDU_Length of MULPDU
 *	octets) the transmit engine may build, given the MULPDU software
 *	derived from the MSS; NULL: software's.  Must not sleep.
 * @tx_batch: TSO batching: most FPDUs handed to TCP at once, given the
 *	device's tx_batch setting; NULL: the setting.  Called at connection
 *	start.
 * @rx_place: RX placement: put @len received payload octets at @src into
 *	@dst, a kernel mapping of the target buffer (tagged or untagged); NULL:
 *	memcpy.  Softirq or process context: must not sleep.
 */
struct xiw_offload_ops {
	const char *name;
	struct module *owner;
	struct list_head list;

	int (*conn_start)(struct xiw_offload_conn *oc);
	void (*conn_stop)(struct xiw_offload_conn *oc);
	u32 (*crc32c)(struct xiw_offload_conn *oc, u32 crc, const u8 *p,
		      size_t len);
	u32 (*tx_mulpdu)(struct xiw_offload_conn *oc, u32 mulpdu);
	u32 (*tx_batch)(struct xiw_offload_conn *oc, u32 batch);
	void (*rx_place)(struct xiw_offload_conn *oc, void *dst,
			 const void *src, unsigned int len);
};

int xiw_offload_register(struct xiw_offload_ops *ops);
void xiw_offload_unregister(struct xiw_offload_ops *ops);

/* For xiw itself. */
const struct xiw_offload_ops *xiw_offload_get(const char *name);
void xiw_offload_put(const struct xiw_offload_ops *ops);
bool xiw_offload_exists(const char *name);
int xiw_offload_check_netdev(struct net_device *ndev);
int xiw_offload_init(void);

#endif /* _XIW_OFFLOAD_H */
