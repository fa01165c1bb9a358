// SPDX-License-Identifier: GPL-2.0
/*
 * MPA framing arithmetic (RFC 5044 sec 4 and 5): pad, MULPDU, marker
 * placement and the marker format.
 *
 * Stream positions count octets of the marker-inclusive FPDU stream from
 * the first octet after the MPA Reply (position 0 carries a marker when
 * markers are in use). Whenever the next octet to send or receive sits at
 * a multiple of 512, a 4 octet marker comes first. A marker right at an
 * FPDU boundary belongs to the FPDU that follows and its FPDUPTR is 0;
 * any other marker holds the distance from the FPDU's ULPDU_Length field
 * to the marker.
 */
#include "xiw_proto.h"

/**
 * xiw_mpa_mulpdu() - largest ULPDU that fits one TCP segment
 * @emss: effective MSS of the connection
 * @markers: markers are inserted into this direction
 * @crc: CRC is in use (the CRC field is always present, so this does not
 *	change the result; the parameter keeps call sites explicit)
 *
 * RFC 5044 sec 4.1: MULPDU = EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS mod 4)
 * with markers, EMSS - (6 + EMSS mod 4) without.
 *
 * Return: MULPDU, at most 65535, 0 if @emss is too small for any FPDU.
 */
u32 xiw_mpa_mulpdu(u32 emss, bool markers, bool crc)
{
	u64 over = MPA_HDR_LEN + MPA_CRC_LEN + (emss % MPA_ALIGN);
	u64 m;

	(void)crc;
	if (markers)
		over += (u64)MPA_MARKER_LEN *
			(((u64)emss + MPA_MARKER_SPACING - 1) / MPA_MARKER_SPACING);
	if (emss <= over)
		return 0;
	m = emss - over;
	return m > MPA_MAX_ULPDU ? MPA_MAX_ULPDU : (u32)m;
}

/**
 * xiw_mpa_fpdu_len_marked() - xiw_mpa_fpdu_len() with markers in use
 * @stream_pos: stream position of the FPDU's first octet
 * @ulpdu_len: ULPDU_Length
 *
 * Return: ULPDU_Length field + ULPDU + pad + CRC, plus 4 for every marker
 * inserted before one of those octets.
 */
u32 xiw_mpa_fpdu_len_marked(u32 stream_pos, u32 ulpdu_len)
{
	u32 rem = MPA_HDR_LEN + ulpdu_len + xiw_mpa_pad_len(ulpdu_len) +
		  MPA_CRC_LEN;
	u32 total = 0, pos = stream_pos;

	while (rem) {
		u32 d = xiw_mpa_marker_distance(pos), take;

		if (d == 0) {
			pos += MPA_MARKER_LEN;
			total += MPA_MARKER_LEN;
			d = MPA_MARKER_SPACING - MPA_MARKER_LEN;
		}
		take = rem < d ? rem : d;
		pos += take;
		total += take;
		rem -= take;
	}
	return total;
}

/**
 * xiw_mpa_marker_build() - encode a marker
 * @out: 4 octets
 * @fpduptr: FPDUPTR value
 */
void xiw_mpa_marker_build(u8 out[MPA_MARKER_LEN], u16 fpduptr)
{
	out[0] = 0;
	out[1] = 0;
	xiw_put_be16(out + 2, fpduptr);
}

/**
 * xiw_mpa_marker_check() - validate a received marker
 * @in: 4 octets
 * @expect_fpduptr: FPDUPTR the receiver's framing state predicts
 *
 * Return: %XIW_OK, %XIW_ERR_MPA_MARKER_RSVD if the reserved half is not
 * zero, %XIW_ERR_MPA_MARKER if FPDUPTR disagrees with ULPDU_Length framing.
 */
enum xiw_proto_err xiw_mpa_marker_check(const u8 in[MPA_MARKER_LEN],
					u16 expect_fpduptr)
{
	if (in[0] || in[1])
		return XIW_ERR_MPA_MARKER_RSVD;
	if (xiw_get_be16(in + 2) != expect_fpduptr)
		return XIW_ERR_MPA_MARKER;
	return XIW_OK;
}
