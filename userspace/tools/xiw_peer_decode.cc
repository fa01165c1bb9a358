// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer decode: capture (pcap, pcapng or raw stream) to a listing of
// MPA frames and DDP segments.  Framing, CRC and header checks are the
// protocol core's (xiw_mpa_frame_parse, xiw_rx_step, xiw_term_parse);
// capture files are read by libpcap; this file adds the link and IP
// headers, TCP reassembly, the MPA negotiation rules that decide the
// framing of each direction, and the text.
#include "xiw_peer_decode.h"

#include <arpa/inet.h>
#include <pcap/pcap.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <map>
#include <vector>

#include "xiw_proto.h"

namespace xiw::peer {

const char *term_layer_name(uint8_t layer)
{
	switch (layer) {
	case TERM_LAYER_RDMAP: return "RDMAP";
	case TERM_LAYER_DDP: return "DDP";
	case TERM_LAYER_LLP: return "LLP";
	default: return "?";
	}
}

namespace {

using Bytes = std::vector<uint8_t>;

constexpr size_t kHexMax = 64;		// payload octets dumped with --hex

std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));

std::string fmt(const char *f, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, f);
	int n = vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	if (n < 0)
		return {};
	if (size_t(n) < sizeof(buf))
		return std::string(buf, size_t(n));
	std::string s(size_t(n) + 1, '\0');
	va_start(ap, f);
	vsnprintf(s.data(), s.size(), f, ap);
	va_end(ap);
	s.resize(size_t(n));
	return s;
}

// Lines of one listing, each behind the caller's prefix.
struct Out {
	std::string &s;
	const std::string &prefix;

	void line(const std::string &t)
	{
		s += prefix;
		s += t;
		s += '\n';
	}
};

// Up to kHexMax of the @have octets at @p, of @total in all.
void hex_dump(Out &w, const uint8_t *p, size_t have, size_t total)
{
	size_t n = std::min(have, kHexMax);

	for (size_t i = 0; i < n; i += 16) {
		std::string s = fmt("      %04zx ", i), asc;

		for (size_t k = 0; k < 16; k++) {
			if (k == 8)
				s += ' ';
			if (i + k < n) {
				uint8_t c = p[i + k];

				s += fmt(" %02x", c);
				asc += (c >= 0x20 && c < 0x7f) ? char(c) : '.';
			} else {
				s += "   ";
			}
		}
		w.line(s + "  |" + asc + "|");
	}
	if (total > n)
		w.line(fmt("      ... %zu more octets", total - n));
}

/* ---- MPA Request / Reply ------------------------------------------------ */

// The leading MPA frame of a direction, if the stream starts with a key.
struct Frame {
	bool keyed = false;
	xiw_proto_err err = XIW_OK;
	xiw_mpa_frame f{};
	size_t len = 0;

	bool ok() const { return keyed && err == XIW_OK; }
};

bool starts_with_key(const uint8_t *p, size_t len)
{
	size_t n = std::min(len, size_t(MPA_KEY_LEN));

	return n && (!memcmp(p, MPA_KEY_REQ, n) || !memcmp(p, MPA_KEY_REP, n));
}

Frame probe_frame(const uint8_t *p, size_t len)
{
	Frame fr;

	fr.keyed = starts_with_key(p, len);
	if (fr.keyed)
		fr.err = xiw_mpa_frame_parse(p, len, &fr.f, &fr.len);
	return fr;
}

std::string rtr_names(uint8_t rtr)
{
	std::string s;

	if (rtr & XIW_MPA_RTR_WRITE)
		s += ",write";
	if (rtr & XIW_MPA_RTR_READ)
		s += ",read";
	if (rtr & XIW_MPA_RTR_SEND)
		s += ",send";
	return s.empty() ? "none" : s.substr(1);
}

std::string frame_line(const xiw_mpa_frame &f)
{
	std::string s = fmt("MPA %s rev %u crc=%d markers=%d",
			    f.reply ? "Reply" : "Request", f.rev, f.crc,
			    f.markers);

	if (f.reject)
		s += " REJECT";
	if (f.enhanced) {
		s += fmt(" enhanced p2p=%d ird=%u ord=%u", f.p2p, f.ird, f.ord);
		if (f.rtr)
			s += " rtr=" + rtr_names(f.rtr);
	}
	if (f.rsvd)
		s += fmt(" rsvd=0x%x", f.rsvd);
	return s + fmt(" pdata=%u", f.pdata_len);
}

/* ---- DDP segments -------------------------------------------------------- */

// Names of a TERMINATE error type and code (RFC 5040, 5041, 5044, 6581).
void term_names(const xiw_term_code &c, const char **type, const char **code)
{
	*type = nullptr;
	*code = nullptr;
	if (c.layer == TERM_LAYER_RDMAP) {
		static const char *const ecodes[] = {
			"invalid STag", "base or bounds violation",
			"access rights violation", "STag not associated",
			"TO wrap", "invalid RDMAP version", "unexpected opcode",
			"catastrophic error, localized to stream",
			"catastrophic error, global", "STag cannot be invalidated",
		};
		if (c.etype == RDMAP_ETYPE_CATASTROPHIC) {
			*type = "local catastrophic";
			return;
		}
		if (c.etype == RDMAP_ETYPE_REMOTE_PROTECTION)
			*type = "remote protection";
		else if (c.etype == RDMAP_ETYPE_REMOTE_OPERATION)
			*type = "remote operation";
		else
			return;
		if (c.ecode < std::size(ecodes))
			*code = ecodes[c.ecode];
		else if (c.ecode == RDMAP_ECODE_UNSPECIFIED)
			*code = "unspecified";
	} else if (c.layer == TERM_LAYER_DDP) {
		static const char *const tagged[] = {
			"invalid STag", "base or bounds violation",
			"STag not associated", "TO wrap", "invalid DDP version",
		};
		static const char *const untagged[] = {
			nullptr, "invalid QN", "invalid MSN (no buffer)",
			"invalid MSN (MSN range)", "invalid MO",
			"message too long", "invalid DDP version",
		};
		if (c.etype == DDP_ETYPE_CATASTROPHIC) {
			*type = "local catastrophic";
		} else if (c.etype == DDP_ETYPE_TAGGED_BUF) {
			*type = "tagged buffer";
			if (c.ecode < std::size(tagged))
				*code = tagged[c.ecode];
		} else if (c.etype == DDP_ETYPE_UNTAGGED_BUF) {
			*type = "untagged buffer";
			if (c.ecode < std::size(untagged))
				*code = untagged[c.ecode];
		}
	} else if (c.layer == TERM_LAYER_LLP && c.etype == LLP_ETYPE_MPA) {
		static const char *const mpa[] = {
			nullptr, "TCP connection lost", "CRC error",
			"marker and ULPDU_Length mismatch",
			"invalid MPA Request or Reply", "local catastrophic",
			"insufficient IRD", "no matching RTR",
		};
		*type = "MPA";
		if (c.ecode < std::size(mpa))
			*code = mpa[c.ecode];
	}
}

// The DDP header a TERMINATE copies (14 or 18 octets).
std::string copied_ddp(const uint8_t *d)
{
	const xiw_rdmap_opinfo *oi = xiw_rdmap_op_lookup(d[1] & RDMAP_OPCODE_MASK);
	std::string s = oi ? oi->name : fmt("opcode %u", d[1] & RDMAP_OPCODE_MASK);

	if (d[0] & DDP_FLAG_T)
		s += fmt(" STag 0x%08x TO 0x%" PRIx64,
			 xiw_get_be32(d + DDP_TAGGED_STAG_OFF),
			 xiw_get_be64(d + DDP_TAGGED_TO_OFF));
	else
		s += fmt(" QN %u MSN %u MO %u",
			 xiw_get_be32(d + DDP_UNTAGGED_QN_OFF),
			 xiw_get_be32(d + DDP_UNTAGGED_MSN_OFF),
			 xiw_get_be32(d + DDP_UNTAGGED_MO_OFF));
	if (d[0] & DDP_FLAG_L)
		s += " L";
	return s;
}

// TERMINATE body (control word first); false if it is malformed.
bool term_desc(const Bytes &body, std::string *s)
{
	xiw_term t;
	const char *type, *code;

	if (xiw_term_parse(body.data(), body.size(), &t) != XIW_OK) {
		*s += fmt(" malformed body (%zu octets)", body.size());
		return false;
	}
	const xiw_term_code &c = t.ctrl.code;

	term_names(c, &type, &code);
	*s += fmt(" layer %s(%u) type %u", term_layer_name(c.layer), c.layer, c.etype);
	if (type)
		*s += fmt(" (%s)", type);
	*s += fmt(" code 0x%02x", c.ecode);
	if (code)
		*s += fmt(" (%s)", code);
	if (t.ctrl.m || t.ctrl.d || t.ctrl.r) {
		std::string f;

		if (t.ctrl.m)
			f += " M";
		if (t.ctrl.d)
			f += " D";
		if (t.ctrl.r)
			f += " R";
		*s += " [" + f.substr(1) + "]";
	}
	if (t.ctrl.m)
		*s += fmt(" seglen %u", t.seg_len);
	if (t.ctrl.d)
		*s += " ddp {" + copied_ddp(t.ddp_hdr) + "}";
	if (t.ctrl.r) {
		const uint8_t *r = t.rdmap_hdr;

		*s += fmt(" rdmap {sink STag 0x%08x TO 0x%" PRIx64 " size %u"
			  " src STag 0x%08x TO 0x%" PRIx64 "}",
			  xiw_get_be32(r + RDMAP_RR_SINK_STAG_OFF),
			  xiw_get_be64(r + RDMAP_RR_SINK_TO_OFF),
			  xiw_get_be32(r + RDMAP_RR_SIZE_OFF),
			  xiw_get_be32(r + RDMAP_RR_SRC_STAG_OFF),
			  xiw_get_be64(r + RDMAP_RR_SRC_TO_OFF));
	}
	return true;
}

// One segment line after "#N @pos "; false if a TERMINATE is malformed.
bool seg_desc(const xiw_rdmap_hdr &h, const xiw_rdmap_opinfo *oi, uint32_t len,
	      const Bytes &term, std::string *out)
{
	std::string s = oi ? oi->name : fmt("opcode %u", h.opcode);
	bool ok = true;

	if (h.tagged) {
		*out = s + fmt(" STag 0x%08x TO 0x%" PRIx64 "%s len %u", h.stag,
			       h.to, h.last ? " L" : "", len);
		return true;
	}
	if (oi && oi->inval_stag)
		s += fmt(" STag 0x%08x", h.rsvdulp);
	s += fmt(" MSN %u", h.msn);
	switch (h.opcode) {
	case RDMAP_OP_READ_REQ: {
		const xiw_read_req &r = h.u.read_req;

		s += fmt(" sink STag 0x%08x TO 0x%" PRIx64 " size %u"
			 " src STag 0x%08x TO 0x%" PRIx64, r.sink_stag,
			 r.sink_to, r.size, r.src_stag, r.src_to);
		break;
	}
	case RDMAP_OP_TERMINATE:
		ok = term_desc(term, &s);
		break;
	case RDMAP_OP_IMM_DATA:
	case RDMAP_OP_IMM_DATA_SE:
		s += fmt(" data 0x%016" PRIx64, h.u.imm_data);
		break;
	case RDMAP_OP_ATOMIC_REQ: {
		const xiw_atomic_req &a = h.u.atomic_req;

		s += fmt(" %s id %u STag 0x%08x TO 0x%" PRIx64,
			 a.op == RDMAP_ATOMIC_FETCHADD ? "FetchAdd" : "CmpSwap",
			 a.req_id, a.stag, a.to);
		if (a.op == RDMAP_ATOMIC_FETCHADD)
			s += fmt(" add 0x%" PRIx64 " mask 0x%" PRIx64, a.data,
				 a.data_mask);
		else
			s += fmt(" cmp 0x%" PRIx64 " mask 0x%" PRIx64
				 " swap 0x%" PRIx64 " mask 0x%" PRIx64, a.cmp,
				 a.cmp_mask, a.data, a.data_mask);
		break;
	}
	case RDMAP_OP_ATOMIC_RESP:
		s += fmt(" id %u value 0x%016" PRIx64, h.u.atomic_resp.req_id,
			 h.u.atomic_resp.value);
		break;
	default:
		s += fmt(" MO %u%s len %u", h.mo, h.last ? " L" : "", len);
		break;
	}
	*out = s + fmt(" (QN %u)", h.qn);
	return ok;
}

/* ---- one direction --------------------------------------------------------- */

// Where reassembly of a captured direction stopped short.
struct Gap {
	bool has = false;
	uint64_t at = 0;	// stream octet of the first missing octet
	uint64_t missing = 0;	// octets missing before the next captured one
	uint64_t beyond = 0;	// captured octets after the gap
};

struct Segment {
	bool on = false;
	uint64_t no = 0;
	uint64_t at = 0;
	xiw_rdmap_hdr h{};
	const xiw_rdmap_opinfo *oi = nullptr;
	uint32_t len = 0;
	Bytes hex;
	Bytes term;
};

int decode_dir(const uint8_t *p, size_t len, const DecodeOptions &o,
	       const Frame *peer, const Gap *gap, std::string &out,
	       const std::string &prefix)
{
	Out w{ out, prefix };
	int errors = 0;
	uint64_t segs = 0;
	size_t off = 0;
	Segment seg;

	auto finish = [&]() {
		if (gap && gap->has) {
			w.line(fmt("  ! gap: %" PRIu64 " octets missing at stream octet %"
				   PRIu64 ", %" PRIu64 " captured octets after it not decoded",
				   gap->missing, gap->at, gap->beyond));
			errors++;
		}
		w.line(fmt("  %" PRIu64 " segments, %zu octets, %d errors", segs,
			   off, errors));
		return errors;
	};
	// print the pending segment; false if its TERMINATE body is malformed
	auto emit = [&](const char *suffix) {
		std::string d;

		bool ok = seg_desc(seg.h, seg.oi, seg.len, seg.term, &d);
		w.line(fmt("  #%" PRIu64 " @%" PRIu64 " ", seg.no, seg.at) + d + suffix);
		if (o.hex && seg.len)
			hex_dump(w, seg.hex.data(), seg.hex.size(), seg.len);
		seg.on = false;
		return ok;
	};

	if (!len) {
		w.line("(no data)");
		return finish();
	}

	Frame fr = probe_frame(p, len);
	bool crc, markers;
	const char *crc_src, *mk_src;

	if (peer && !peer->ok())
		peer = nullptr;
	if (fr.keyed) {
		if (fr.err == XIW_ERR_MPA_TRUNCATED) {
			w.line(fmt("MPA frame incomplete: %zu of %zu octets", len,
				   xiw_mpa_frame_need(p, len)));
			if (!(gap && gap->has)) {
				w.line(fmt("  ! error %s at stream octet 0",
					   xiw_proto_err_name(fr.err)));
				errors++;
			}
			return finish();
		}
		if (fr.err != XIW_OK) {
			w.line(fmt("  ! error %s at stream octet 0 (MPA frame)",
				   xiw_proto_err_name(fr.err)));
			errors++;
			return finish();
		}
		w.line(frame_line(fr.f));
		if (o.hex && fr.f.pdata_len)
			hex_dump(w, fr.f.pdata, fr.f.pdata_len, fr.f.pdata_len);
		off = fr.len;
		if ((fr.f.reply && fr.f.reject) ||
		    (peer && peer->f.reply && peer->f.reject)) {
			w.line("  rejected: no FPDUs follow");
			if (len > off)
				w.line(fmt("  note: %zu octets follow the rejected"
					   " setup, not decoded", len - off));
			return finish();
		}
		// CRC is on if either side asked; markers go to the side that
		// asked to receive them, i.e. this direction follows the M
		// flag of the other side's frame.
		if (o.crc >= 0) {
			crc = o.crc;
			crc_src = "forced";
		} else if (peer) {
			crc = fr.f.crc || peer->f.crc;
			crc_src = "negotiated";
		} else {
			crc = fr.f.crc;
			crc_src = "this frame";
		}
		if (o.markers >= 0) {
			markers = o.markers;
			mk_src = "forced";
		} else if (peer) {
			markers = peer->f.markers;
			mk_src = "peer frame";
		} else {
			// A marker stream starts with a marker of FPDUPTR 0;
			// a ULPDU_Length is never 0.
			markers = len - off >= 2 && !p[off] && !p[off + 1];
			mk_src = "detected";
		}
	} else {
		crc = o.crc == 1;
		markers = o.markers == 1;
		crc_src = o.crc >= 0 ? "forced" : "default";
		mk_src = o.markers >= 0 ? "forced" : "default";
		w.line("no MPA frame: FPDUs from octet 0");
	}
	w.line(fmt("  framing crc=%d (%s) markers=%d (%s)", crc, crc_src,
		   markers, mk_src));

	xiw_rx rx;

	xiw_rx_init(&rx, crc, markers, 0, 0);
	while (off < len) {
		xiw_rx_event ev;
		size_t used = 0;
		xiw_proto_err e = xiw_rx_step(&rx, p + off, len - off, &used, &ev);

		off += used;
		if (e != XIW_OK) {
			uint64_t at;
			std::string extra;

			if (e == XIW_ERR_MPA_MARKER || e == XIW_ERR_MPA_MARKER_RSVD) {
				at = off >= MPA_MARKER_LEN ? off - MPA_MARKER_LEN : 0;
				extra = fmt(" (marker %02x%02x%02x%02x)", rx.mk[0],
					    rx.mk[1], rx.mk[2], rx.mk[3]);
			} else {
				at = off - uint32_t(rx.stream_pos - rx.fpdu_pos);
				if (e == XIW_ERR_MPA_CRC) {
					const uint8_t *f = rx.trl + rx.trl_need - MPA_CRC_LEN;
					uint8_t c[MPA_CRC_LEN];

					xiw_crc_put(rx.crc_state, c);
					extra = fmt(" (CRC field %02x%02x%02x%02x,"
						    " computed %02x%02x%02x%02x)",
						    f[0], f[1], f[2], f[3],
						    c[0], c[1], c[2], c[3]);
				}
			}
			if (seg.on) {
				emit("");
				extra += fmt(" in #%" PRIu64, segs);
			}
			w.line(fmt("  ! error %s at stream octet %" PRIu64,
				   xiw_proto_err_name(e), at) + extra);
			errors++;
			return finish();
		}
		if (ev.type == XIW_RX_EV_NONE) {
			if (!used)
				break;
			continue;
		}
		switch (ev.type) {
		case XIW_RX_EV_HDR:
			seg = Segment();
			seg.on = true;
			seg.no = ++segs;
			seg.at = off - uint32_t(rx.stream_pos - rx.fpdu_pos);
			seg.h = rx.hdr;
			seg.oi = rx.info;
			seg.len = rx.data_len;
			if (rx.hdr.opcode == RDMAP_OP_TERMINATE) {
				const uint8_t *c = rx.raw + MPA_HDR_LEN + DDP_UNTAGGED_HDR_LEN;

				seg.term.assign(c, c + RDMAP_TERM_CTRL_LEN);
			}
			break;
		case XIW_RX_EV_DATA:
			if (o.hex && seg.hex.size() < kHexMax)
				seg.hex.insert(seg.hex.end(), ev.data,
					       ev.data + std::min<size_t>(ev.len,
						       kHexMax - seg.hex.size()));
			if (seg.h.opcode == RDMAP_OP_TERMINATE)
				seg.term.insert(seg.term.end(), ev.data, ev.data + ev.len);
			break;
		case XIW_RX_EV_END: {
			uint64_t at = seg.at, no = seg.no;

			if (!emit("")) {
				w.line(fmt("  ! error %s at stream octet %" PRIu64
					   " in #%" PRIu64,
					   xiw_proto_err_name(XIW_ERR_RDMAP_TERM_MALFORMED),
					   at, no));
				errors++;
			}
			break;
		}
		default:
			break;
		}
	}
	if (seg.on) {
		// a TERMINATE body cut short is no error of its own
		emit(fmt(" (stream ends inside this FPDU, after %u of %u payload octets)",
			 rx.data_off, seg.len).c_str());
	} else if (rx.raw_got || rx.mk_got) {
		w.line(fmt("  note: stream ends inside an FPDU header (%u octets)",
			   rx.raw_got + rx.mk_got));
	}
	return finish();
}

/* ---- pcap ------------------------------------------------------------------ */

// The first four octets of a capture file: classic pcap (microsecond and
// nanosecond timestamps, either byte order) and a pcapng section header.
// A file that starts with one of them and that libpcap cannot read is an
// error, any other file a raw stream.
constexpr uint32_t kCaptureMagic[] = { 0xa1b2c3d4, 0xd4c3b2a1, 0xa1b23c4d, 0x4d3cb2a1,
				       0x0a0d0d0a };

constexpr uint8_t kTcpSyn = 0x02;

// A TCP segment as captured.
struct TcpSeg {
	int family = 0;
	uint8_t src[16] = {}, dst[16] = {};
	uint16_t sport = 0, dport = 0;
	uint32_t seq = 0;
	uint8_t flags = 0;
	const uint8_t *data = nullptr;
	size_t len = 0;		// payload octets captured
	size_t full = 0;	// payload octets sent
};

bool link_supported(int dlt)
{
	return dlt == DLT_EN10MB || dlt == DLT_LINUX_SLL || dlt == DLT_LINUX_SLL2 ||
	       dlt == DLT_RAW || dlt == DLT_IPV4 || dlt == DLT_IPV6;
}

// Strip the link header of libpcap's link type @dlt; false if the frame
// carries no IP.
bool link_ip(int dlt, const uint8_t *p, size_t n, const uint8_t **ip, size_t *iplen)
{
	size_t off;
	uint16_t et;

	switch (dlt) {
	case DLT_EN10MB:
		if (n < 14)
			return false;
		et = xiw_get_be16(p + 12);
		off = 14;
		break;
	case DLT_LINUX_SLL:
		if (n < 16)
			return false;
		et = xiw_get_be16(p + 14);
		off = 16;
		break;
	case DLT_LINUX_SLL2:
		if (n < 20)
			return false;
		et = xiw_get_be16(p);
		off = 20;
		break;
	default:
		*ip = p;
		*iplen = n;
		return n > 0;
	}
	while (et == 0x8100 || et == 0x88a8 || et == 0x9100) {
		if (n < off + 4)
			return false;
		et = xiw_get_be16(p + off + 2);
		off += 4;
	}
	if (et != 0x0800 && et != 0x86dd)
		return false;
	*ip = p + off;
	*iplen = n - off;
	return true;
}

// IPv4/IPv6 to TCP; false for anything else (fragments included).
bool ip_tcp(const uint8_t *p, size_t n, TcpSeg *t)
{
	const uint8_t *l4;
	size_t l4cap, l4full;

	if (n < 1)
		return false;
	if (p[0] >> 4 == 4) {
		size_t ihl = size_t(p[0] & 0x0f) * 4, tot;

		if (n < 20 || ihl < 20 || n < ihl || p[9] != IPPROTO_TCP)
			return false;
		if (xiw_get_be16(p + 6) & 0x3fff)	// MF or fragment offset
			return false;
		tot = xiw_get_be16(p + 2);
		if (!tot)			// segmentation offload
			tot = n;
		if (tot < ihl)
			return false;
		t->family = AF_INET;
		memcpy(t->src, p + 12, 4);
		memcpy(t->dst, p + 16, 4);
		l4 = p + ihl;
		l4full = tot - ihl;
		l4cap = std::min(n, tot) - ihl;
	} else if (p[0] >> 4 == 6) {
		size_t off = 40, full;
		uint8_t nh;

		if (n < 40)
			return false;
		full = xiw_get_be16(p + 4) ? 40 + size_t(xiw_get_be16(p + 4)) : n;
		nh = p[6];
		for (;;) {
			size_t hl;

			if (nh == 0 || nh == 43 || nh == 60)
				hl = 0;
			else if (nh == 51)	// AH
				hl = 1;
			else
				break;
			if (n < off + 8)
				return false;
			hl = hl ? (size_t(p[off + 1]) + 2) * 4 : (size_t(p[off + 1]) + 1) * 8;
			nh = p[off];
			off += hl;
		}
		if (nh != IPPROTO_TCP || full < off || n < off)
			return false;
		t->family = AF_INET6;
		memcpy(t->src, p + 8, 16);
		memcpy(t->dst, p + 24, 16);
		l4 = p + off;
		l4full = full - off;
		l4cap = std::min(n, full) - off;
	} else {
		return false;
	}
	if (l4cap < 20)
		return false;

	size_t doff = size_t(l4[12] >> 4) * 4;

	if (doff < 20 || l4cap < doff || l4full < doff)
		return false;
	t->sport = xiw_get_be16(l4);
	t->dport = xiw_get_be16(l4 + 2);
	t->seq = xiw_get_be32(l4 + 4);
	t->flags = l4[13];
	t->data = l4 + doff;
	t->len = l4cap - doff;
	t->full = l4full - doff;
	return true;
}

std::string endpoint(int family, const uint8_t *a, uint16_t port)
{
	char buf[INET6_ADDRSTRLEN];

	if (!inet_ntop(family, a, buf, sizeof(buf)))
		return "?";
	if (family == AF_INET6)
		return fmt("[%s]:%u", buf, port);
	return fmt("%s:%u", buf, port);
}

std::string flow_key(int family, const uint8_t *a, uint16_t ap,
		     const uint8_t *b, uint16_t bp)
{
	std::string k(1, char(family));

	k.append(reinterpret_cast<const char *>(a), 16);
	k += char(ap >> 8);
	k += char(ap);
	k.append(reinterpret_cast<const char *>(b), 16);
	k += char(bp >> 8);
	k += char(bp);
	return k;
}

// One TCP direction being reassembled.
struct Dir {
	std::string label;
	bool have_base = false;
	bool syn = false;
	uint32_t base = 0;		// sequence number of stream octet 0
	Bytes data;			// in-order octets
	std::map<uint64_t, Bytes> ooo;	// octets beyond a hole, by offset
	int peer = -1;
	uint64_t packets = 0;
	uint64_t dup_octets = 0;
	uint64_t reordered = 0;		// segments that waited for a hole to fill
	uint64_t cut = 0;		// segments cut short by the snapshot length
};

void dir_drain(Dir &d)
{
	while (!d.ooo.empty()) {
		auto it = d.ooo.begin();
		uint64_t next = d.data.size(), end = it->first + it->second.size();

		if (it->first > next)
			break;
		d.reordered++;
		if (end > next)
			d.data.insert(d.data.end(), it->second.end() - (end - next),
				      it->second.end());
		else
			d.dup_octets += it->second.size();
		d.ooo.erase(it);
	}
}

void dir_add(Dir &d, uint32_t seq, const uint8_t *p, size_t n)
{
	uint64_t next = d.data.size();
	int64_t off = int64_t(next) + int32_t(seq - uint32_t(d.base + uint32_t(next)));

	if (!n)
		return;
	if (off < 0) {
		size_t cut = size_t(std::min<int64_t>(-off, int64_t(n)));

		d.dup_octets += cut;
		p += cut;
		n -= cut;
		off = 0;
		if (!n)
			return;
	}
	uint64_t at = uint64_t(off);

	if (at + n <= next) {
		d.dup_octets += n;
		return;
	}
	if (at < next) {
		d.dup_octets += next - at;
		p += next - at;
		n -= size_t(next - at);
		at = next;
	}
	if (at == next) {
		d.data.insert(d.data.end(), p, p + n);
		dir_drain(d);
		return;
	}
	Bytes &slot = d.ooo[at];
	if (slot.size() < n)
		slot.assign(p, p + n);
}

Gap dir_gap(const Dir &d)
{
	Gap g;
	uint64_t end = 0;

	if (d.ooo.empty())
		return g;
	g.has = true;
	g.at = d.data.size();
	g.missing = d.ooo.begin()->first - g.at;
	for (const auto &[at, b] : d.ooo) {
		uint64_t from = std::max(at, end), to = at + b.size();

		if (to > from)
			g.beyond += to - from;
		end = std::max(end, to);
	}
	return g;
}

struct Capture {
	std::vector<Dir> dirs;
	std::map<std::string, int> cur;		// flow key -> current Dir
	uint64_t packets = 0, tcp = 0;
	std::vector<std::string> notes;

	int dir_for(const TcpSeg &t)
	{
		std::string k = flow_key(t.family, t.src, t.sport, t.dst, t.dport);
		auto it = cur.find(k);
		bool syn = t.flags & kTcpSyn;

		if (it != cur.end()) {
			Dir &d = dirs[size_t(it->second)];

			if (!syn || !d.have_base ||
			    (d.syn && uint32_t(t.seq + 1) == d.base))
				return it->second;
			if (!d.syn && d.data.empty() && d.ooo.empty()) {
				d.have_base = false;	// rebase on the SYN
				return it->second;
			}
			// a SYN with a new ISN: a new connection, same 4-tuple
		}

		int i = int(dirs.size());
		std::string rk = flow_key(t.family, t.dst, t.dport, t.src, t.sport);
		auto r = cur.find(rk);

		dirs.emplace_back();
		dirs.back().label = endpoint(t.family, t.src, t.sport) + " > " +
				    endpoint(t.family, t.dst, t.dport);
		cur[k] = i;
		if (r != cur.end() && dirs[size_t(r->second)].peer < 0) {
			dirs[size_t(r->second)].peer = i;
			dirs.back().peer = r->second;
		}
		return i;
	}

	void add(const TcpSeg &t)
	{
		Dir &d = dirs[size_t(dir_for(t))];
		bool syn = t.flags & kTcpSyn;

		tcp++;
		d.packets++;
		if (t.len < t.full)
			d.cut++;
		if (!d.have_base) {
			d.have_base = true;
			d.syn = syn;
			d.base = syn ? t.seq + 1 : t.seq;
		}
		dir_add(d, syn ? t.seq + 1 : t.seq, t.data, t.len);
	}
};

// Every packet of the capture open in @pc into its TCP directions.
int decode_pcap(pcap_t *pc, const DecodeOptions &o, std::string &out)
{
	Capture cap;
	int dlt = pcap_datalink(pc), rc;
	struct pcap_pkthdr *h;
	const u_char *data;

	while ((rc = pcap_next_ex(pc, &h, &data)) == 1) {
		const uint8_t *ip;
		size_t iplen;
		TcpSeg t;

		cap.packets++;
		if (link_ip(dlt, data, h->caplen, &ip, &iplen) && ip_tcp(ip, iplen, &t))
			cap.add(t);
	}
	if (rc == PCAP_ERROR)	// a truncated or damaged file: what was read counts
		cap.notes.push_back(fmt("note: capture ends inside record %" PRIu64 " (libpcap: %s)",
					cap.packets + 1, pcap_geterr(pc)));

	// MPA frames first: each direction's framing depends on its peer's.
	std::vector<Frame> frames;

	for (const Dir &d : cap.dirs)
		frames.push_back(probe_frame(d.data.data(), d.data.size()));

	std::vector<bool> done(cap.dirs.size());
	int errors = 0;
	bool first = true;

	for (size_t i = 0; i < cap.dirs.size(); i++) {
		for (int k : { int(i), cap.dirs[i].peer }) {
			if (k < 0 || done[size_t(k)])
				continue;
			done[size_t(k)] = true;

			const Dir &d = cap.dirs[size_t(k)];
			Gap g = dir_gap(d);

			if (!first)
				out += '\n';
			first = false;
			out += d.label + '\n';
			if (d.dup_octets || d.reordered || d.cut)
				out += fmt("  tcp: %" PRIu64 " packets, %" PRIu64
					   " retransmitted octets dropped, %" PRIu64
					   " segments out of order\n", d.packets,
					   d.dup_octets, d.reordered);
			if (d.cut)
				out += fmt("  tcp: %" PRIu64 " segments cut short by the"
					   " capture's snapshot length (tcpdump -s 0 keeps"
					   " them whole)\n", d.cut);
			errors += decode_dir(d.data.data(), d.data.size(), o,
					     d.peer >= 0 ? &frames[size_t(d.peer)] : nullptr,
					     &g, out, "");
		}
	}
	if (!first)
		out += '\n';
	for (const std::string &n : cap.notes)
		out += n + '\n';
	out += fmt("capture: %" PRIu64 " packets, %" PRIu64 " TCP, %zu directions, %d errors\n",
		   cap.packets, cap.tcp, cap.dirs.size(), errors);
	return errors;
}

// The rest of @f into @b; false with the reason in @why on a read error.
bool read_rest(FILE *f, Bytes *b, std::string *why)
{
	uint8_t buf[65536];
	size_t n;

	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		b->insert(b->end(), buf, buf + n);
	if (ferror(f)) {
		*why = strerror(errno);
		return false;
	}
	return true;
}

bool capture_magic(const Bytes &b)
{
	if (b.size() < 4)
		return false;

	uint32_t m = uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3];

	return std::find(std::begin(kCaptureMagic), std::end(kCaptureMagic), m) !=
	       std::end(kCaptureMagic);
}

// A capture: libpcap reads @f from its start and closes it.
int decode_capture(const std::string &path, FILE *f, const DecodeOptions &o,
		   std::string &out)
{
	char err[PCAP_ERRBUF_SIZE] = "";
	pcap_t *pc;
	int dlt, r;

	rewind(f);
	pc = pcap_fopen_offline(f, err);
	if (!pc) {
		fclose(f);
		out += path + ": " + err + '\n';
		return -1;
	}
	dlt = pcap_datalink(pc);
	if (link_supported(dlt)) {
		r = decode_pcap(pc, o, out);
	} else {
		const char *name = pcap_datalink_val_to_name(dlt);

		out += path + fmt(": link type %d (%s) is not supported\n", dlt,
				  name ? name : "unknown");
		r = -1;
	}
	pcap_close(pc);
	return r;
}

void usage(FILE *f)
{
	fputs("usage: xiw-peer decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE\n"
	      "  FILE: a pcap or pcapng capture (Ethernet, Linux cooked SLL/SLL2,\n"
	      "        raw IP; IPv4/IPv6 TCP)\n"
	      "        or one raw direction of an MPA stream\n"
	      "  --crc, --no-crc          force CRC checking on or off\n"
	      "  --markers, --no-markers  force markers on or off\n"
	      "                           (default for both: as the MPA frames say)\n"
	      "  --hex                    dump the first 64 payload octets of each segment\n"
	      "exit status: 0 no errors, 1 errors found, 2 usage or I/O error\n", f);
}

}  // namespace

int decode_stream(const uint8_t *p, size_t len, const DecodeOptions &o,
		  std::string &out, const std::string &prefix)
{
	return decode_dir(p, len, o, nullptr, nullptr, out, prefix);
}

int decode_file(const std::string &path, const DecodeOptions &o,
		std::string &out)
{
	FILE *f = fopen(path.c_str(), "rb");
	Bytes b(4);
	std::string why;

	if (!f) {
		out += path + ": " + strerror(errno) + '\n';
		return -1;
	}
	b.resize(fread(b.data(), 1, b.size(), f));
	if (!ferror(f) && capture_magic(b))
		return decode_capture(path, f, o, out);
	bool ok = !ferror(f) && read_rest(f, &b, &why);
	if (!ok && why.empty())
		why = strerror(errno);
	fclose(f);
	if (!ok) {
		out += path + ": " + why + '\n';
		return -1;
	}
	out += path + " (raw stream)\n";
	return decode_dir(b.data(), b.size(), o, nullptr, nullptr, out, "");
}

int decode_main(int argc, char **argv)
{
	DecodeOptions o;
	const char *file = nullptr;
	bool opts = true;

	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];

		if (opts && a == "--") {
			opts = false;
		} else if (opts && a.size() > 1 && a[0] == '-') {
			if (a == "--crc")
				o.crc = 1;
			else if (a == "--no-crc")
				o.crc = 0;
			else if (a == "--markers")
				o.markers = 1;
			else if (a == "--no-markers")
				o.markers = 0;
			else if (a == "--hex")
				o.hex = true;
			else if (a == "-h" || a == "--help") {
				usage(stdout);
				return 0;
			} else {
				fprintf(stderr, "xiw-peer decode: unknown option %s\n",
					a.c_str());
				usage(stderr);
				return 2;
			}
		} else if (file) {
			fprintf(stderr, "xiw-peer decode: one FILE only\n");
			usage(stderr);
			return 2;
		} else {
			file = argv[i];
		}
	}
	if (!file) {
		usage(stderr);
		return 2;
	}

	std::string out;
	int r = decode_file(file, o, out);

	if (r < 0) {
		fprintf(stderr, "xiw-peer decode: %s", out.c_str());
		return 2;
	}
	fwrite(out.data(), 1, out.size(), stdout);
	if (fflush(stdout) != 0)
		return 2;
	return r ? 1 : 0;
}

}  // namespace xiw::peer
