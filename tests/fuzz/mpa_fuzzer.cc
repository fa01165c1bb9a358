// SPDX-License-Identifier: GPL-2.0
// MPA Request/Reply parser and negotiation fuzzer. Input: a frame.
// Invariants: parse -> build -> parse is stable; consumed octets are the
// frame; under every policy of a fixed set the negotiated parameters obey
// that policy, the reply can be built and parsed, errors map to LLP.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_check.h"
#include "proto/xiw_proto.h"

static void check_negotiation(const xiw_mpa_frame &peer)
{
	for (int crc = 0; crc < 4; crc++) {
		for (int mk = 0; mk < 3; mk++) {
			for (int v = 0; v < 4; v++) {
				xiw_mpa_policy pol{};
				xiw_mpa_params a;
				xiw_term_code tc;

				pol.crc = (xiw_mpa_crc_policy)crc;
				pol.markers = (xiw_mpa_marker_policy)mk;
				pol.rev = v & 1 ? 2 : 1;
				pol.p2p = v == 3;
				pol.rtr = (u8)(v + 1);
				pol.ird = 16;
				pol.ord = 8;
				pol.ird_strict = v == 1;
				xiw_proto_err e = xiw_mpa_negotiate(&pol, &peer, &a);

				if (e != XIW_OK) {
					XIW_FUZZ_CHECK(xiw_proto_err_term(e, &tc));
					XIW_FUZZ_CHECK(tc.layer == TERM_LAYER_LLP);
				} else {
					XIW_FUZZ_CHECK(a.rev == peer.rev && a.rev <= pol.rev);
					XIW_FUZZ_CHECK(a.crc == (peer.crc || crc == XIW_MPA_CRC_PREFER ||
								 crc == XIW_MPA_CRC_REQUIRE));
					XIW_FUZZ_CHECK(crc != XIW_MPA_CRC_STRICT || !a.crc);
					XIW_FUZZ_CHECK(crc != XIW_MPA_CRC_REQUIRE || a.crc);
					XIW_FUZZ_CHECK(mk != XIW_MPA_MARKERS_OFF ||
						       (!a.markers_tx && !a.markers_rx));
					XIW_FUZZ_CHECK(mk != XIW_MPA_MARKERS_REQUIRE ||
						       (a.markers_tx && a.markers_rx));
					XIW_FUZZ_CHECK(a.ord <= pol.ord);
					if (a.enhanced)
						XIW_FUZZ_CHECK(a.ord <= peer.ird);
					if (a.p2p) {
						XIW_FUZZ_CHECK(pol.p2p);
						XIW_FUZZ_CHECK(a.rtr && !(a.rtr & (a.rtr - 1)));
						XIW_FUZZ_CHECK(a.rtr & pol.rtr);
					} else {
						XIW_FUZZ_CHECK(a.rtr == 0);
					}
				}
				if (!peer.reply) {
					xiw_mpa_frame rep, back;
					u8 out[64];
					size_t n, used;

					XIW_FUZZ_CHECK(xiw_mpa_reply_init(&pol, &peer, &a, e, &rep) == XIW_OK);
					XIW_FUZZ_CHECK(xiw_mpa_frame_build(&rep, out, sizeof(out), &n) == XIW_OK);
					XIW_FUZZ_CHECK(xiw_mpa_frame_parse(out, n, &back, &used) == XIW_OK);
					XIW_FUZZ_CHECK(back.reply && back.reject == (e != XIW_OK));
				}
			}
		}
	}
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	xiw_mpa_frame f, g;
	size_t used = 0, n, used2;
	u8 out[MPA_RR_HDR_LEN + MPA_MAX_PD_LEN];
	xiw_proto_err e = xiw_mpa_frame_parse(data, size, &f, &used);

	if (e != XIW_OK) {
		xiw_term_code tc;

		XIW_FUZZ_CHECK(used == 0);
		XIW_FUZZ_CHECK(xiw_proto_err_term(e, &tc) && tc.layer == TERM_LAYER_LLP);
		if (e == XIW_ERR_MPA_TRUNCATED)
			XIW_FUZZ_CHECK(xiw_mpa_frame_need(data, size) > size);
		return 0;
	}
	XIW_FUZZ_CHECK(used == MPA_RR_HDR_LEN + (size_t)f.pd_len && used <= size);
	XIW_FUZZ_CHECK(xiw_mpa_frame_need(data, size) == used);
	XIW_FUZZ_CHECK(f.pdata_len == f.pd_len - (f.enhanced ? MPA_V2_HDR_LEN : 0));
	XIW_FUZZ_CHECK(!f.pdata_len || (f.pdata >= data && f.pdata + f.pdata_len <= data + used));
	XIW_FUZZ_CHECK(xiw_mpa_frame_build(&f, out, sizeof(out), &n) == XIW_OK);
	XIW_FUZZ_CHECK(xiw_mpa_frame_parse(out, n, &g, &used2) == XIW_OK && used2 == n);
	XIW_FUZZ_CHECK(f.reply == g.reply && f.markers == g.markers && f.crc == g.crc &&
		       f.reject == g.reject && f.enhanced == g.enhanced && f.rsvd == g.rsvd &&
		       f.rev == g.rev && f.p2p == g.p2p && f.rtr == g.rtr && f.ird == g.ird &&
		       f.ord == g.ord && f.pd_len == g.pd_len && f.pdata_len == g.pdata_len);
	XIW_FUZZ_CHECK(!f.pdata_len || !memcmp(f.pdata, g.pdata, f.pdata_len));
	// a canonical frame re-encodes to itself
	if (!((data[MPA_RR_FLAGS_OFF] & MPA_RR_FLAG_ENHANCED) && !f.enhanced))
		XIW_FUZZ_CHECK(!memcmp(out, data, n));
	check_negotiation(f);
	return 0;
}
