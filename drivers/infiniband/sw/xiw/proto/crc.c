// SPDX-License-Identifier: GPL-2.0
/*
 * CRC32c as MPA uses it (RFC 5044 sec 4.1, RFC 3720 appendix B.4).
 *
 * The CRC register starts at all ones, the final value is inverted and
 * goes on the wire least significant byte first, exactly like the iSCSI
 * digest: 32 zero bytes give the wire bytes aa 36 91 8a.
 */
#include "xiw_proto.h"

/**
 * xiw_crc_update() - feed bytes into a running MPA CRC
 * @crc: running value, XIW_CRC_SEED for a fresh FPDU
 * @p: bytes
 * @len: number of bytes
 *
 * Return: the updated running value.
 */
u32 xiw_crc_update(u32 crc, const u8 *p, size_t len)
{
	while (len > 0x40000000) {
		crc = crc32c(crc, p, 0x40000000);
		p += 0x40000000;
		len -= 0x40000000;
	}
	return crc32c(crc, p, (unsigned int)len);
}

/**
 * xiw_crc_copy() - copy bytes and feed them into a running MPA CRC
 * @crc: running value
 * @dst: destination (must not overlap @src)
 * @src: bytes
 * @len: number of bytes
 *
 * One pass over the data where the environment offers a fused copy.
 *
 * Return: the updated running value.
 */
u32 xiw_crc_copy(u32 crc, u8 *dst, const u8 *src, size_t len)
{
	while (len > 0x40000000) {
		crc = xiw_copy_crc32c(crc, dst, src, 0x40000000);
		dst += 0x40000000;
		src += 0x40000000;
		len -= 0x40000000;
	}
	return xiw_copy_crc32c(crc, dst, src, (unsigned int)len);
}

/**
 * xiw_crc_put() - write the final CRC field of an FPDU
 * @crc: running value after the last covered byte
 * @out: the 4 byte CRC field
 */
void xiw_crc_put(u32 crc, u8 out[MPA_CRC_LEN])
{
	crc = ~crc;
	out[0] = (u8)crc;
	out[1] = (u8)(crc >> 8);
	out[2] = (u8)(crc >> 16);
	out[3] = (u8)(crc >> 24);
}

/**
 * xiw_crc_get() - read a CRC field as the running value it must match
 * @in: the 4 byte CRC field
 *
 * Return: the running value (not inverted) the field stands for.
 */
u32 xiw_crc_get(const u8 in[MPA_CRC_LEN])
{
	u32 v = (u32)in[0] | (u32)in[1] << 8 | (u32)in[2] << 16 |
		(u32)in[3] << 24;

	return ~v;
}

/**
 * xiw_crc32c_value() - the standard CRC32c check value of a buffer
 * @p: bytes
 * @len: number of bytes
 *
 * Return: CRC32c as usually quoted (e.g. 0xe3069283 for "123456789").
 */
u32 xiw_crc32c_value(const u8 *p, size_t len)
{
	return ~xiw_crc_update(XIW_CRC_SEED, p, len);
}
