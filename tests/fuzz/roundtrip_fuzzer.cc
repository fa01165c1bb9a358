// SPDX-License-Identifier: GPL-2.0
// DDP/RDMAP header and TERMINATE body decode -> encode -> decode fuzzer.
// Input: selector octet (even: segment header, odd: TERMINATE body), then
// the octets. Invariants: accepted input re-encodes to the same length,
// decodes to the same fields and re-encodes to the same octets; rejected
// input has a TERMINATE triplet.
#include <cstdint>
#include <cstring>

#include "fuzz_check.h"
#include "proto/xiw_proto.h"

static bool same_hdr(const xiw_rdmap_hdr &a, const xiw_rdmap_hdr &b)
{
	u8 x[XIW_RDMAP_HDR_MAX], y[XIW_RDMAP_HDR_MAX];
	size_t nx, ny;

	if (a.opcode != b.opcode || a.tagged != b.tagged || a.last != b.last ||
	    a.stag != b.stag || a.to != b.to || a.rsvdulp != b.rsvdulp || a.qn != b.qn ||
	    a.msn != b.msn || a.mo != b.mo)
		return false;
	if (xiw_rdmap_hdr_build(&a, x, sizeof(x), &nx) || xiw_rdmap_hdr_build(&b, y, sizeof(y), &ny))
		return false;
	return nx == ny && !memcmp(x, y, nx);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xiw_term_code tc;

	if (size < 1)
		return 0;
	const u8 *p = data + 1;
	size_t n = size - 1;

	if (!(data[0] & 1)) {
		xiw_rdmap_hdr h, h2;
		u8 out[XIW_RDMAP_HDR_MAX], out2[XIW_RDMAP_HDR_MAX];
		size_t hl, n1, hl2, n2;
		xiw_proto_err e = xiw_rdmap_hdr_parse(p, n, &h, &hl);

		if (e != XIW_OK) {
			XIW_FUZZ_CHECK(hl == 0 && xiw_proto_err_term(e, &tc));
			return 0;
		}
		const struct xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(h.opcode);
		XIW_FUZZ_CHECK(oi && hl == oi->hdr_len && hl <= n && oi->tagged == h.tagged);
		XIW_FUZZ_CHECK(xiw_rdmap_hdr_build(&h, out, sizeof(out), &n1) == XIW_OK && n1 == hl);
		// reserved bits aside, the encoding reproduces the input
		for (size_t i = 2; i < hl; i++) {
			bool rsvd = (h.opcode == RDMAP_OP_ATOMIC_REQ && i >= 18 && i < 21) ||
				    (h.opcode == RDMAP_OP_ATOMIC_REQ && i == 21) ||
				    (h.opcode == RDMAP_OP_TERMINATE && i >= 20);
			if (!rsvd)
				XIW_FUZZ_CHECK(out[i] == p[i]);
		}
		XIW_FUZZ_CHECK(xiw_rdmap_hdr_parse(out, n1, &h2, &hl2) == XIW_OK && hl2 == hl);
		XIW_FUZZ_CHECK(same_hdr(h, h2));
		XIW_FUZZ_CHECK(xiw_rdmap_hdr_build(&h2, out2, sizeof(out2), &n2) == XIW_OK);
		XIW_FUZZ_CHECK(n2 == n1 && !memcmp(out, out2, n1));
		XIW_FUZZ_CHECK(xiw_rdmap_seg_check(&h, (u32)hl) == XIW_OK);
		XIW_FUZZ_CHECK((xiw_rdmap_seg_check(&h, (u32)hl + 1) == XIW_ERR_RDMAP_PAYLOAD) == !oi->payload);
		return 0;
	}

	xiw_term t, t2;
	u8 out[RDMAP_TERM_MAX_LEN], out2[RDMAP_TERM_MAX_LEN];
	size_t n1, n2;
	xiw_proto_err e = xiw_term_parse(p, n, &t);

	if (e != XIW_OK) {
		XIW_FUZZ_CHECK(e == XIW_ERR_RDMAP_TERM_MALFORMED && xiw_proto_err_term(e, &tc));
		return 0;
	}
	XIW_FUZZ_CHECK(n <= RDMAP_TERM_MAX_LEN);
	XIW_FUZZ_CHECK(xiw_term_build(&t, out, sizeof(out), &n1) == XIW_OK && n1 == n);
	XIW_FUZZ_CHECK(out[0] == p[0] && out[1] == p[1] && !memcmp(out + 4, p + 4, n - 4));
	XIW_FUZZ_CHECK(xiw_term_parse(out, n1, &t2) == XIW_OK);
	XIW_FUZZ_CHECK(xiw_term_build(&t2, out2, sizeof(out2), &n2) == XIW_OK);
	XIW_FUZZ_CHECK(n2 == n1 && !memcmp(out, out2, n1));
	// the reported triplet maps to some error and back to a triplet
	XIW_FUZZ_CHECK(xiw_proto_err_term(xiw_term_code_to_err(&t.ctrl.code), &tc));
	return 0;
}
