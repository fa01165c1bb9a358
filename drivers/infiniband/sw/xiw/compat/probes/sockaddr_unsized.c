// SPDX-License-Identifier: GPL-2.0
/*
 * Linux 6.19: kernel_bind() and kernel_connect() take a struct
 * sockaddr_unsized * (the address length is the caller's argument) instead
 * of a struct sockaddr *.
 */
#include <linux/net.h>
#include <linux/socket.h>

int (*probe_bind)(struct socket *, struct sockaddr_unsized *, int)
	__maybe_unused = kernel_bind;
int (*probe_connect)(struct socket *, struct sockaddr_unsized *, int, int)
	__maybe_unused = kernel_connect;
