# SPDX-License-Identifier: GPL-2.0
#
# xiw developer console.  See README.md; `make help` lists the targets.

KDIR ?= /lib/modules/$(shell uname -r)/build
KVER ?= 6.12
XIW_CACHE ?= /var/cache/xiw
export XIW_CACHE

DRV := drivers/infiniband/sw/xiw
USERSPACE_BUILD := build/userspace

.PHONY: all module modules clean install unit userspace vm vm-debug check \
	check-full demo bench bench-focus bench-proto bench-storage fuzz help \
	dkms-source install-dkms \
	uninstall-dkms

all: module

help:
	@echo 'make                   xiw.ko for KDIR ($(KDIR))'
	@echo 'make modules KVER=K    xiw.ko for the pinned Debian kernel K (6.1, 6.12, 6.12-rt, 7.3, 7.3-rt), W=1 -Werror;'
	@echo '                       K=debug, debug-6.12, debug-7.3: the self-built debug kernels (with xiw_kunit.ko)'
	@echo 'make install           install xiw.ko for KDIR into /lib/modules/<kver>/updates'
	@echo 'make dkms-source       the DKMS source tree in $(DKMS_STAGE) (what `dkms add` takes)'
	@echo 'make install-dkms      that tree at $(DESTDIR)$(DKMS_SRC); without DESTDIR also `dkms install` (DKMS_ARGS=-k KVER)'
	@echo 'make uninstall-dkms    `dkms remove` for every kernel, then the tree at $(DKMS_SRC) goes'
	@echo 'make unit              userspace build and GoogleTest suites'
	@echo 'make vm KVER=K         in-VM selftests on kernel K'
	@echo 'make vm-debug          KUnit and selftests on the self-built debug kernel (make vm KVER=debug-6.12: on that one)'
	@echo 'make check             the gating tier, what CI runs (tests/selftests/tiers)'
	@echo 'make check-full        every test there is'
	@echo 'make demo              boot a VM, create xiw devices, show them'
	@echo 'make bench             xiw vs siw vs TCP on veth 1500/9000, lo and a two-VM wire, NVMe-oF against NVMe/TCP, plus the protocol core (report in bench/results/)'
	@echo 'make bench-focus       a few perftest points, xiw and siw in turns, dummy and veth topologies (BENCH_POINTS, BENCH_PROFILE=1; BENCH_INSNS=N counts instructions, BENCH_PATH=N traces the critical path, BENCH_NVME=N counts an NVMe-oF read)'
	@echo 'make bench-proto       the protocol core microbenchmarks (BENCH_ARGS= passes Google Benchmark flags)'
	@echo 'make bench-storage     NVMe-oF, iSER, SMB Direct throughput, xiw vs siw in a VM (KVER=6.12 or debug)'
	@echo 'make fuzz              every fuzzer for FUZZ_SECONDS (default 60) each'

# Out-of-tree build against KDIR, in place.
module:
	$(DRV)/compat/gen-compat.sh $(KDIR) $(CURDIR)/$(DRV)/compat/generated/xiw_compat_autoconf.h
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_XIW=m modules

# INSTALL_MOD_PATH=DIR installs under DIR (a staging root) and runs depmod
# there.  depmod runs for the release directory the module went to, which
# is Kbuild's KERNELRELEASE (not always what `make kernelrelease` prints).
install: module
	@stamp=$$(mktemp) && \
	$(MAKE) -C $(KDIR) M=$(CURDIR) CONFIG_RDMA_XIW=m INSTALL_MOD_DIR=updates modules_install && \
	kos=$$(find $(INSTALL_MOD_PATH)/lib/modules -path '*/updates/$(DRV)/xiw.ko*' -newer $$stamp) && \
	rm -f $$stamp && \
	[ -n "$$kos" ] || { echo "make install: xiw.ko not installed" >&2; exit 1; } && \
	for ko in $$kos; do \
		rel=$${ko#$(INSTALL_MOD_PATH)/lib/modules/}; rel=$${rel%%/*}; \
		echo "  DEPMOD  $$rel"; \
		depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) -a $$rel || exit 1; \
	done

# DKMS.  The version is dkms.conf's.  The source tree DKMS builds from
# holds only what a module build needs; DKMS copies it to its own build
# directory per kernel (see dkms.conf).
XIW_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' $(CURDIR)/dkms.conf)
DKMS_STAGE := build/dkms/xiw-$(XIW_VERSION)
DKMS_SRC ?= /usr/src/xiw-$(XIW_VERSION)

dkms-source:
	rm -rf $(DKMS_STAGE)
	mkdir -p $(DKMS_STAGE)
	tar -c --exclude-vcs --exclude=generated --exclude='*.o' --exclude='*.ko' \
		--exclude='*.cmd' --exclude='*.mod' --exclude='*.mod.c' \
		--exclude=modules.order --exclude=Module.symvers --exclude='.tmp*' \
		--exclude='kproto_*.c' dkms.conf Makefile Kbuild drivers uapi | \
		tar -x -C $(DKMS_STAGE)
	@echo "  DKMS    $(DKMS_STAGE)"

# Without DESTDIR: replaces what DKMS has of this version, then adds,
# builds and installs it for the running kernel (DKMS_ARGS="-k KVER" for
# another one).
install-dkms: dkms-source
	rm -rf $(DESTDIR)$(DKMS_SRC)
	mkdir -p $(DESTDIR)$(DKMS_SRC)
	cp -a $(DKMS_STAGE)/. $(DESTDIR)$(DKMS_SRC)/
ifeq ($(DESTDIR),)
	if dkms status xiw/$(XIW_VERSION) | grep -q .; then \
		dkms remove xiw/$(XIW_VERSION) --all; fi
	dkms install xiw/$(XIW_VERSION) $(DKMS_ARGS)
endif

uninstall-dkms:
	if dkms status xiw/$(XIW_VERSION) | grep -q .; then \
		dkms remove xiw/$(XIW_VERSION) --all; fi
	rm -rf $(DKMS_SRC)

modules:
	tests/vm/build-module $(KVER) >/dev/null

userspace:
	cmake -S userspace -B $(USERSPACE_BUILD) -DBUILD_TESTING=ON >/dev/null
	$(MAKE) -C $(USERSPACE_BUILD) -j2 --no-print-directory

unit: userspace
	cd $(USERSPACE_BUILD) && ctest --output-on-failure -j2

# The selftests also drive the userspace tools (xiw-verbs-test).
vm: modules userspace
	tests/vm/build-siw $(KVER) >/dev/null
	tests/vm/run-selftests --kver $(KVER)

vm-debug: userspace
	tests/vm/build-module debug >/dev/null
	tests/vm/run-selftests --kver debug

check:
	tests/check

check-full:
	tests/check --full

demo:
	tests/vm/demo

# xiw vs siw vs raw TCP in one 6.12 VM run, with the protocol core's
# microbenchmarks, into bench/results/ (tests/vm/bench).
bench:
	KVER=$(KVER) tests/vm/bench

# The storage ULPs' 1 MiB sequential throughput on one device, xiw next to
# siw, in one VM run (tests/vm/bench-storage).
bench-storage:
	KVER=$(KVER) tests/vm/bench-storage

# A few perftest points (BENCH_POINTS) in one VM run, xiw and siw taking
# turns, on the dummy and veth topologies (tests/vm/bench-focus).
bench-focus:
	KVER=$(KVER) tests/vm/bench-focus

# The protocol core's microbenchmarks alone (ratios to memcpy at the end).
bench-proto: userspace
	$(USERSPACE_BUILD)/bench/xiw-proto-bench $(BENCH_ARGS)

FUZZ_SECONDS ?= 60
fuzz:
	tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS)

clean:
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null
	rm -rf build $(DRV)/compat/generated
