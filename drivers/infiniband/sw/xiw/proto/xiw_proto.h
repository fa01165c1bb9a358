/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xiw protocol core: MPA, DDP, RDMAP and TERMINATE over byte slices.
 *
 * Pure C11, no allocation, no locks, no skb: callers own all memory and
 * serialize access to a given state object. The same object code runs in
 * the kernel module, in GoogleTest, in the fuzzers and in the benchmarks.
 */
#ifndef XIW_PROTO_H
#define XIW_PROTO_H

#include "xiw_proto_deps.h"
#include "xiw_wire.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Byte-wise big-endian field access (identical in kernel and userspace)  */
/* ---------------------------------------------------------------------- */

static inline u16 xiw_get_be16(const u8 *p)
{
	return (u16)((u16)p[0] << 8 | (u16)p[1]);
}

static inline u32 xiw_get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | (u32)p[3];
}

static inline u64 xiw_get_be64(const u8 *p)
{
	return (u64)xiw_get_be32(p) << 32 | (u64)xiw_get_be32(p + 4);
}

static inline void xiw_put_be16(u8 *p, u16 v)
{
	p[0] = (u8)(v >> 8);
	p[1] = (u8)v;
}

static inline void xiw_put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

static inline void xiw_put_be64(u8 *p, u64 v)
{
	xiw_put_be32(p, (u32)(v >> 32));
	xiw_put_be32(p + 4, (u32)v);
}

/* ---------------------------------------------------------------------- */
/* Errors                                                                 */
/* ---------------------------------------------------------------------- */

/**
 * enum xiw_proto_err - every error the protocol core can return
 *
 * Each value except %XIW_OK maps to exactly one TERMINATE
 * layer/etype/ecode triplet, see xiw_proto_err_term().
 */
enum xiw_proto_err {
	XIW_OK = 0,

	/* API misuse and local conditions */
	XIW_ERR_INVAL,			/* bad argument (RDMAP local catastrophic) */
	XIW_ERR_NOSPACE,		/* output buffer too small (ditto) */

	/* MPA connection setup (LLP, MPA, 0x04 unless noted) */
	XIW_ERR_MPA_TRUNCATED,		/* fewer bytes than the frame needs */
	XIW_ERR_MPA_KEY,		/* neither request nor reply key */
	XIW_ERR_MPA_UNEXPECTED_KEY,	/* request where a reply was due or v.v. */
	XIW_ERR_MPA_REV,		/* revision not 1 or 2 */
	XIW_ERR_MPA_PD_LEN,		/* PD_Length > 512 */
	XIW_ERR_MPA_V2_HDR,		/* enhanced frame, PD_Length < 4 */
	XIW_ERR_MPA_IRD_ORD_RANGE,	/* IRD/ORD above 14 bits (build) */
	XIW_ERR_MPA_REJECTED,		/* peer set the R flag */
	XIW_ERR_MPA_REV_MISMATCH,	/* revisions cannot be agreed */
	XIW_ERR_MPA_CRC_MISMATCH,	/* CRC policy conflict */
	XIW_ERR_MPA_MARKERS_MISMATCH,	/* marker policy conflict */
	XIW_ERR_MPA_P2P_MISMATCH,	/* P2P requested but not agreed */
	XIW_ERR_MPA_LOCAL_CATASTROPHIC,	/* 0x05 */
	XIW_ERR_MPA_INSUFFICIENT_IRD,	/* 0x06 */
	XIW_ERR_MPA_NO_MATCHING_RTR,	/* 0x07 */

	/* MPA full operation (LLP, MPA) */
	XIW_ERR_MPA_CRC,		/* 0x02: CRC32c mismatch */
	XIW_ERR_MPA_MARKER,		/* 0x03: FPDUPTR disagrees */
	XIW_ERR_MPA_MARKER_RSVD,	/* 0x03: marker reserved field not 0 */
	XIW_ERR_MPA_ULPDU_LEN,		/* 0x03: ULPDU_Length above limit */

	/* DDP tagged buffer errors (DDP, 0x1) */
	XIW_ERR_DDP_T_INVALID_STAG,
	XIW_ERR_DDP_T_BASE_BOUNDS,
	XIW_ERR_DDP_T_STAG_NOT_ASSOC,
	XIW_ERR_DDP_T_TO_WRAP,
	XIW_ERR_DDP_T_VERSION,

	/* DDP untagged buffer errors (DDP, 0x2) */
	XIW_ERR_DDP_UT_INVALID_QN,
	XIW_ERR_DDP_UT_MSN_NOBUF,
	XIW_ERR_DDP_UT_MSN_RANGE,
	XIW_ERR_DDP_UT_INVALID_MO,
	XIW_ERR_DDP_UT_MSG_TOOLONG,
	XIW_ERR_DDP_UT_VERSION,

	XIW_ERR_DDP_CATASTROPHIC,	/* DDP local catastrophic */

	/* RDMAP (RDMAP layer) */
	XIW_ERR_RDMAP_VERSION,		/* op 0x05 */
	XIW_ERR_RDMAP_OPCODE,		/* op 0x06: unknown/reserved opcode */
	XIW_ERR_RDMAP_OPCODE_MODEL,	/* op 0x06: T flag contradicts opcode */
	XIW_ERR_RDMAP_ATOMIC_OPCODE,	/* op 0x06: unknown atomic operation */
	XIW_ERR_RDMAP_HDR_SHORT,	/* op 0xff: ULPDU shorter than headers */
	XIW_ERR_RDMAP_PAYLOAD,		/* op 0xff: payload on a header-only msg */
	XIW_ERR_RDMAP_SEGMENTED,	/* op 0xff: single-segment msg with L=0/MO!=0 */
	XIW_ERR_RDMAP_TERM_MALFORMED,	/* op 0xff: TERMINATE body inconsistent */
	XIW_ERR_RDMAP_UNSPECIFIED,	/* op 0xff */
	XIW_ERR_RDMAP_INVALID_STAG,	/* prot 0x00 */
	XIW_ERR_RDMAP_BASE_BOUNDS,	/* prot 0x01 */
	XIW_ERR_RDMAP_ATOMIC_ALIGN,	/* prot 0x01: atomic TO not 8-aligned */
	XIW_ERR_RDMAP_ACCESS,		/* prot 0x02 */
	XIW_ERR_RDMAP_STAG_NOT_ASSOC,	/* prot 0x03 */
	XIW_ERR_RDMAP_TO_WRAP,		/* prot 0x04 */
	XIW_ERR_RDMAP_CANNOT_INVALIDATE,/* op 0x09 */
	XIW_ERR_RDMAP_CATASTROPHIC_STREAM,	/* op 0x07 */
	XIW_ERR_RDMAP_CATASTROPHIC_GLOBAL,	/* op 0x08 */
	XIW_ERR_RDMAP_CATASTROPHIC,	/* local catastrophic 0x00 */

	XIW_ERR_COUNT
};

/**
 * struct xiw_term_code - a TERMINATE layer/etype/ecode triplet
 * @layer: TERM_LAYER_RDMAP, TERM_LAYER_DDP or TERM_LAYER_LLP
 * @etype: error type within the layer
 * @ecode: error code within the type
 */
struct xiw_term_code {
	u8 layer;
	u8 etype;
	u8 ecode;
};

const char *xiw_proto_err_name(enum xiw_proto_err err);
bool xiw_proto_err_term(enum xiw_proto_err err, struct xiw_term_code *tc);
enum xiw_proto_err xiw_term_code_to_err(const struct xiw_term_code *tc);

/* ---------------------------------------------------------------------- */
/* CRC32c as MPA uses it                                                  */
/* ---------------------------------------------------------------------- */

/** XIW_CRC_SEED - starting value of a running MPA CRC */
#define XIW_CRC_SEED	0xffffffffU

u32 xiw_crc_update(u32 crc, const u8 *p, size_t len);
u32 xiw_crc_copy(u32 crc, u8 *dst, const u8 *src, size_t len);
void xiw_crc_put(u32 crc, u8 out[MPA_CRC_LEN]);
u32 xiw_crc_get(const u8 in[MPA_CRC_LEN]);
u32 xiw_crc32c_value(const u8 *p, size_t len);

/*
 * A CRC provider other than xiw_crc_update() (an offload backend): feeds
 * @len octets at @p into the running value @crc, with the same result.
 */
typedef u32 (*xiw_crc_fn)(void *ctx, u32 crc, const u8 *p, size_t len);

/* Run @fn (with @ctx), or xiw_crc_update() when @fn is NULL. */
static inline u32 xiw_crc_run(xiw_crc_fn fn, void *ctx, u32 crc, const u8 *p,
			      size_t len)
{
	return fn ? fn(ctx, crc, p, len) : xiw_crc_update(crc, p, len);
}

/* ---------------------------------------------------------------------- */
/* MPA connection setup and negotiation (mpa.c)                           */
/* ---------------------------------------------------------------------- */

/* RTR types (RFC 6581), usable as a mask */
#define XIW_MPA_RTR_WRITE	0x1	/* zero-length RDMA Write */
#define XIW_MPA_RTR_READ	0x2	/* zero-length RDMA Read */
#define XIW_MPA_RTR_SEND	0x4	/* zero-length Send */
#define XIW_MPA_RTR_ALL		0x7

/**
 * struct xiw_mpa_frame - decoded MPA Request or Reply frame
 * @reply: true for "MPA ID Rep Frame", false for "MPA ID Req Frame"
 * @markers: M flag: the sender wants to receive markers
 * @crc: C flag: the sender wants CRC
 * @reject: R flag (replies only)
 * @enhanced: 0x10 flag: RFC 6581 IRD/ORD words are present (rev 2)
 * @rsvd: the remaining reserved flag bits as received (0x0f)
 * @rev: revision, 1 or 2
 * @pd_len: PD_Length on the wire, including the enhanced words
 * @p2p: enhanced: peer-to-peer mode requested/confirmed
 * @rtr: enhanced: XIW_MPA_RTR_* bits carried in the IRD/ORD words
 * @ird: enhanced: IRD (14 bits)
 * @ord: enhanced: ORD (14 bits)
 * @pdata: ULP private data (after the enhanced words); NULL if none
 * @pdata_len: length of @pdata
 */
struct xiw_mpa_frame {
	bool reply;
	bool markers;
	bool crc;
	bool reject;
	bool enhanced;
	u8 rsvd;
	u8 rev;
	u16 pd_len;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
	const u8 *pdata;
	u16 pdata_len;
};

/**
 * enum xiw_mpa_crc_policy - local CRC policy
 * @XIW_MPA_CRC_OFF: do not ask for CRC; use it if the peer asks (RFC 5044)
 * @XIW_MPA_CRC_PREFER: ask for CRC; CRC is then always on
 * @XIW_MPA_CRC_REQUIRE: ask for CRC and reject a peer that did not ask
 * @XIW_MPA_CRC_STRICT: never run with CRC: reject a peer that asks
 */
enum xiw_mpa_crc_policy {
	XIW_MPA_CRC_OFF,
	XIW_MPA_CRC_PREFER,
	XIW_MPA_CRC_REQUIRE,
	XIW_MPA_CRC_STRICT,
};

/**
 * enum xiw_mpa_marker_policy - local marker policy
 * @XIW_MPA_MARKERS_OFF: no markers in either direction (siw behaviour):
 *	reject a peer that wants to receive markers
 * @XIW_MPA_MARKERS_PREFER: ask to receive markers, send them if asked
 * @XIW_MPA_MARKERS_REQUIRE: markers in both directions, reject otherwise
 */
enum xiw_mpa_marker_policy {
	XIW_MPA_MARKERS_OFF,
	XIW_MPA_MARKERS_PREFER,
	XIW_MPA_MARKERS_REQUIRE,
};

/**
 * struct xiw_mpa_policy - local MPA negotiation policy
 * @crc: CRC policy
 * @markers: marker policy
 * @rev: revision we send (1 or 2); we accept peers at 1..@rev
 * @rev_strict: reject a peer whose revision differs from @rev
 * @p2p: rev 2: request (initiator) or accept (responder) P2P mode
 * @rtr: rev 2 P2P: XIW_MPA_RTR_* types we can use, in preference order
 *	write, read, send
 * @ird: rev 2: inbound RDMA Read/Atomic queue depth we offer
 * @ord: rev 2: outbound RDMA Read/Atomic depth we would like
 * @ird_strict: responder: reject if the peer's ORD exceeds @ird
 *	(%XIW_ERR_MPA_INSUFFICIENT_IRD) instead of letting it lower its ORD
 */
struct xiw_mpa_policy {
	enum xiw_mpa_crc_policy crc;
	enum xiw_mpa_marker_policy markers;
	u8 rev;
	bool rev_strict;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
	bool ird_strict;
};

/**
 * struct xiw_mpa_params - connection parameters both sides agreed on
 * @rev: MPA revision in use
 * @crc: CRC32c generated and checked
 * @markers_tx: we insert markers into what we send
 * @markers_rx: the peer inserts markers into what we receive
 * @enhanced: RFC 6581 IRD/ORD exchange took place
 * @p2p: peer-to-peer mode: an RTR message is exchanged
 * @rtr: the single agreed XIW_MPA_RTR_* type (0 unless @p2p)
 * @ird: our inbound read/atomic depth
 * @ord: our outbound read/atomic depth (never above the peer's IRD)
 * @peer_ird: the peer's advertised IRD
 * @peer_ord: the peer's advertised ORD
 */
struct xiw_mpa_params {
	u8 rev;
	bool crc;
	bool markers_tx;
	bool markers_rx;
	bool enhanced;
	bool p2p;
	u8 rtr;
	u16 ird;
	u16 ord;
	u16 peer_ird;
	u16 peer_ord;
};

size_t xiw_mpa_frame_need(const u8 *p, size_t len);
enum xiw_proto_err xiw_mpa_frame_parse(const u8 *p, size_t len,
				       struct xiw_mpa_frame *f,
				       size_t *consumed);
enum xiw_proto_err xiw_mpa_frame_build(const struct xiw_mpa_frame *f,
				       u8 *out, size_t cap, size_t *out_len);
enum xiw_proto_err xiw_mpa_request_init(const struct xiw_mpa_policy *pol,
					struct xiw_mpa_frame *req);
enum xiw_proto_err xiw_mpa_negotiate(const struct xiw_mpa_policy *pol,
				     const struct xiw_mpa_frame *peer,
				     struct xiw_mpa_params *agreed);
enum xiw_proto_err xiw_mpa_reply_init(const struct xiw_mpa_policy *pol,
				      const struct xiw_mpa_frame *req,
				      const struct xiw_mpa_params *agreed,
				      enum xiw_proto_err verdict,
				      struct xiw_mpa_frame *rep);

/* ---------------------------------------------------------------------- */
/* MPA framing: MULPDU, markers (markers.c)                               */
/* ---------------------------------------------------------------------- */

/**
 * xiw_mpa_pad_len() - pad octets after a ULPDU
 * @ulpdu_len: ULPDU_Length
 *
 * Inline: every FPDU sent and received asks.
 *
 * Return: 0..3 such that ULPDU_Length field + ULPDU + pad is a multiple of 4.
 */
static inline u32 xiw_mpa_pad_len(u32 ulpdu_len)
{
	return (0u - (ulpdu_len + MPA_HDR_LEN)) & (MPA_ALIGN - 1);
}

/**
 * xiw_mpa_marker_distance() - octets until the next marker position
 * @stream_pos: marker-inclusive stream position
 *
 * Return: 0 if a marker is due at @stream_pos, else 1..511.
 */
static inline u32 xiw_mpa_marker_distance(u32 stream_pos)
{
	return (0u - stream_pos) & (MPA_MARKER_SPACING - 1);
}

u32 xiw_mpa_mulpdu(u32 emss, bool markers, bool crc);
u32 xiw_mpa_fpdu_len_marked(u32 stream_pos, u32 ulpdu_len);

/**
 * xiw_mpa_fpdu_len() - octets an FPDU occupies on the wire
 * @stream_pos: stream position of its first octet
 * @markers: markers are in use
 * @ulpdu_len: ULPDU_Length
 *
 * Inline for the common case without markers, which every FPDU framed in
 * place asks.
 *
 * Return: ULPDU_Length field + ULPDU + pad + CRC, plus 4 for every marker
 * inserted before one of those octets.
 */
static inline u32 xiw_mpa_fpdu_len(u32 stream_pos, bool markers,
				   u32 ulpdu_len)
{
	if (markers)
		return xiw_mpa_fpdu_len_marked(stream_pos, ulpdu_len);
	return MPA_HDR_LEN + ulpdu_len + xiw_mpa_pad_len(ulpdu_len) +
	       MPA_CRC_LEN;
}

void xiw_mpa_marker_build(u8 out[MPA_MARKER_LEN], u16 fpduptr);
enum xiw_proto_err xiw_mpa_marker_check(const u8 in[MPA_MARKER_LEN],
					u16 expect_fpduptr);

/* ---------------------------------------------------------------------- */
/* DDP and RDMAP headers (ddp.c, rdmap.c)                                 */
/* ---------------------------------------------------------------------- */

/**
 * enum xiw_rdmap_dir - role of an RDMAP message
 * @XIW_RDMAP_DIR_REQUEST: initiates an operation at the peer
 * @XIW_RDMAP_DIR_RESPONSE: answers a request of the peer
 * @XIW_RDMAP_DIR_CONTROL: stream control (TERMINATE)
 */
enum xiw_rdmap_dir {
	XIW_RDMAP_DIR_REQUEST,
	XIW_RDMAP_DIR_RESPONSE,
	XIW_RDMAP_DIR_CONTROL,
};

/**
 * struct xiw_rdmap_opinfo - static properties of one RDMAP opcode
 * @name: human readable name
 * @opcode: the 4 bit opcode
 * @rfc: defining RFC (5040 or 7306)
 * @tagged: carried in the tagged (true) or untagged buffer model
 * @qn: untagged queue number, RDMAP_QN_NONE if tagged
 * @dir: request, response or control
 * @payload: may carry ULP payload after its headers
 * @single: must be a single DDP segment (L=1, MO=0)
 * @inval_stag: the untagged RsvdULP word holds an Invalidate STag
 * @solicited: carries a solicited event
 * @rdmap_len: length of the RDMAP header that follows the DDP header
 * @hdr_len: DDP header + RDMAP header
 */
struct xiw_rdmap_opinfo {
	const char *name;
	u8 opcode;
	u16 rfc;
	bool tagged;
	u8 qn;
	enum xiw_rdmap_dir dir;
	bool payload;
	bool single;
	bool inval_stag;
	bool solicited;
	u8 rdmap_len;
	u8 hdr_len;
};

/** XIW_RDMAP_HDR_MAX - longest DDP + RDMAP header (Atomic Request) */
#define XIW_RDMAP_HDR_MAX	(DDP_UNTAGGED_HDR_LEN + RDMAP_ATOMIC_REQ_LEN)

/**
 * struct xiw_read_req - RDMA Read Request header (RFC 5040 sec 4.4)
 * @sink_stag: Data Sink STag
 * @sink_to: Data Sink Tagged Offset
 * @size: RDMA Read Message Size
 * @src_stag: Data Source STag
 * @src_to: Data Source Tagged Offset
 */
struct xiw_read_req {
	u32 sink_stag;
	u64 sink_to;
	u32 size;
	u32 src_stag;
	u64 src_to;
};

/**
 * struct xiw_atomic_req - Atomic Request header (RFC 7306)
 * @op: RDMAP_ATOMIC_FETCHADD or RDMAP_ATOMIC_CMPSWAP
 * @req_id: Request Identifier
 * @stag: Remote STag
 * @to: Remote Tagged Offset (8-byte aligned)
 * @data: Add Data (FetchAdd) or Swap Data (CmpSwap)
 * @data_mask: Add Mask or Swap Mask
 * @cmp: Compare Data (CmpSwap)
 * @cmp_mask: Compare Mask (CmpSwap)
 */
struct xiw_atomic_req {
	u8 op;
	u32 req_id;
	u32 stag;
	u64 to;
	u64 data;
	u64 data_mask;
	u64 cmp;
	u64 cmp_mask;
};

/**
 * struct xiw_atomic_resp - Atomic Response header (RFC 7306)
 * @req_id: Original Request Identifier
 * @value: Original Remote Data Value
 */
struct xiw_atomic_resp {
	u32 req_id;
	u64 value;
};

/**
 * struct xiw_term_ctrl - TERMINATE control word (RFC 5040 sec 4.8)
 * @code: layer, etype, ecode
 * @m: DDP Segment Length field present
 * @d: terminated DDP header present
 * @r: terminated RDMAP header present
 */
struct xiw_term_ctrl {
	struct xiw_term_code code;
	bool m;
	bool d;
	bool r;
};

/**
 * struct xiw_rdmap_hdr - decoded DDP + RDMAP header of one DDP segment
 * @tagged: DDP T flag
 * @last: DDP L flag
 * @ddp_version: DDP DV field
 * @rdmap_version: RDMAP RV field
 * @opcode: RDMAP opcode
 * @stag: tagged: Data Sink STag
 * @to: tagged: Data Sink Tagged Offset
 * @rsvdulp: untagged: 32 bit RsvdULP (Invalidate STag for Send w/ Inv)
 * @qn: untagged: Queue Number
 * @msn: untagged: Message Sequence Number
 * @mo: untagged: Message Offset
 * @u: opcode specific RDMAP header
 * @u.read_req: Read Request
 * @u.atomic_req: Atomic Request
 * @u.atomic_resp: Atomic Response
 * @u.imm_data: Immediate Data
 * @u.term: Terminate control word
 */
struct xiw_rdmap_hdr {
	bool tagged;
	bool last;
	u8 ddp_version;
	u8 rdmap_version;
	u8 opcode;
	u32 stag;
	u64 to;
	u32 rsvdulp;
	u32 qn;
	u32 msn;
	u32 mo;
	union {
		struct xiw_read_req read_req;
		struct xiw_atomic_req atomic_req;
		struct xiw_atomic_resp atomic_resp;
		u64 imm_data;
		struct xiw_term_ctrl term;
	} u;
};

/* Indexed by opcode; a reserved opcode's entry has no name. */
extern const struct xiw_rdmap_opinfo xiw_rdmap_ops[RDMAP_OP_COUNT];

/*
 * The two below are inline: every FPDU sent and received asks them, and
 * a call costs about as much as what they do.
 */

/**
 * xiw_rdmap_op_lookup() - static properties of an RDMAP opcode
 * @opcode: 4 bit opcode
 *
 * Return: the table entry, or NULL for a reserved opcode.
 */
static inline const struct xiw_rdmap_opinfo *xiw_rdmap_op_lookup(u8 opcode)
{
	if (opcode >= RDMAP_OP_COUNT || !xiw_rdmap_ops[opcode].name)
		return NULL;
	return &xiw_rdmap_ops[opcode];
}

/**
 * xiw_ddp_ctrl_check() - validate the first two header octets
 * @ddp_ctrl: DDP control octet (T, L, reserved, DV)
 * @rdmap_ctrl: RDMAP control octet (RV, reserved, opcode)
 * @info: set to the opcode properties on success
 *
 * Checks, in this order: DDP version, RDMAP version, known opcode, and
 * that the T flag matches the opcode's buffer model. Reserved bits are
 * not checked (RFC 5041 sec 4.2: ignored on receive).
 *
 * Return: %XIW_OK or the matching DDP/RDMAP error.
 */
static inline enum xiw_proto_err
xiw_ddp_ctrl_check(u8 ddp_ctrl, u8 rdmap_ctrl,
		   const struct xiw_rdmap_opinfo **info)
{
	const struct xiw_rdmap_opinfo *oi;
	bool tagged = !!(ddp_ctrl & DDP_FLAG_T);

	*info = NULL;
	if ((ddp_ctrl & DDP_DV_MASK) != DDP_VERSION)
		return tagged ? XIW_ERR_DDP_T_VERSION : XIW_ERR_DDP_UT_VERSION;
	if (((rdmap_ctrl & RDMAP_RV_MASK) >> RDMAP_RV_SHIFT) != RDMAP_VERSION)
		return XIW_ERR_RDMAP_VERSION;
	oi = xiw_rdmap_op_lookup(rdmap_ctrl & RDMAP_OPCODE_MASK);
	if (!oi)
		return XIW_ERR_RDMAP_OPCODE;
	if (oi->tagged != tagged)
		return XIW_ERR_RDMAP_OPCODE_MODEL;
	*info = oi;
	return XIW_OK;
}

u64 xiw_atomic_apply(const struct xiw_atomic_req *ar, u64 orig);
enum xiw_proto_err xiw_rdmap_hdr_decode(const u8 *p,
					const struct xiw_rdmap_opinfo *oi,
					struct xiw_rdmap_hdr *h);
enum xiw_proto_err xiw_rdmap_hdr_parse(const u8 *p, size_t len,
				       struct xiw_rdmap_hdr *h,
				       size_t *hdr_len);
enum xiw_proto_err xiw_rdmap_hdr_build(const struct xiw_rdmap_hdr *h,
				       u8 *out, size_t cap, size_t *hdr_len);
enum xiw_proto_err xiw_rdmap_seg_check(const struct xiw_rdmap_hdr *h,
				       u32 ulpdu_len);

/**
 * xiw_rdmap_seg_fits() - xiw_rdmap_seg_check() for a known opcode
 * @oi: the opcode's properties
 * @ulpdu_len: the segment's ULPDU_Length
 *
 * Inline for the deframer, which has @oi at hand for every segment.
 *
 * Return: %XIW_OK, %XIW_ERR_RDMAP_HDR_SHORT, %XIW_ERR_RDMAP_PAYLOAD or
 * %XIW_ERR_RDMAP_TERM_MALFORMED, as xiw_rdmap_seg_check().
 */
static inline enum xiw_proto_err
xiw_rdmap_seg_fits(const struct xiw_rdmap_opinfo *oi, u32 ulpdu_len)
{
	if (ulpdu_len < oi->hdr_len)
		return XIW_ERR_RDMAP_HDR_SHORT;
	if (!oi->payload && ulpdu_len != oi->hdr_len)
		return XIW_ERR_RDMAP_PAYLOAD;
	if (oi->opcode == RDMAP_OP_TERMINATE &&
	    ulpdu_len - oi->hdr_len > RDMAP_TERM_MAX_LEN - RDMAP_TERM_CTRL_LEN)
		return XIW_ERR_RDMAP_TERM_MALFORMED;
	return XIW_OK;
}

void xiw_term_ctrl_decode(const u8 in[RDMAP_TERM_CTRL_LEN],
			  struct xiw_term_ctrl *tc);
void xiw_term_ctrl_encode(const struct xiw_term_ctrl *tc,
			  u8 out[RDMAP_TERM_CTRL_LEN]);

/**
 * struct xiw_ddp_queue - receiver state of one untagged DDP queue
 * @msn: MSN of the oldest message not yet completely received
 * @posted: receive buffers available from @msn on (MSNs @msn..@msn+posted-1)
 * @mo: bytes of message @msn received so far (expected MO of its next segment)
 * @buf_len: size of the buffer bound to message @msn
 */
struct xiw_ddp_queue {
	u32 msn;
	u32 posted;
	u32 mo;
	u32 buf_len;
};

/**
 * struct xiw_ddp_region - a tagged buffer as the receiver registered it
 * @stag: STag the buffer is registered under
 * @base: first valid Tagged Offset
 * @len: number of valid bytes from @base
 * @valid: the STag is valid
 * @same_stream: the STag may be used by this DDP stream (PD, QP)
 */
struct xiw_ddp_region {
	u32 stag;
	u64 base;
	u64 len;
	bool valid;
	bool same_stream;
};

enum xiw_proto_err xiw_ddp_check_untagged(const struct xiw_rdmap_hdr *h,
					  u32 payload_len,
					  const struct xiw_ddp_queue *q);
enum xiw_proto_err xiw_ddp_check_tagged(const struct xiw_rdmap_hdr *h,
					u32 payload_len,
					const struct xiw_ddp_region *r);

/* ---------------------------------------------------------------------- */
/* TERMINATE message body (term.c)                                        */
/* ---------------------------------------------------------------------- */

/**
 * struct xiw_term - TERMINATE message body after the untagged DDP header
 * @ctrl: control word (triplet and header-control bits)
 * @seg_len: copied MPA ULPDU_Length of the offending segment (if @ctrl.m)
 * @ddp_hdr: copied DDP header (if @ctrl.d), 14 or 18 bytes
 * @ddp_hdr_len: 14 (tagged) or 18 (untagged) if @ctrl.d, else 0
 * @rdmap_hdr: copied RDMA Read Request header (if @ctrl.r)
 */
struct xiw_term {
	struct xiw_term_ctrl ctrl;
	u16 seg_len;
	u8 ddp_hdr[DDP_UNTAGGED_HDR_LEN];
	u8 ddp_hdr_len;
	u8 rdmap_hdr[RDMAP_READ_REQ_LEN];
};

enum xiw_proto_err xiw_term_parse(const u8 *p, size_t len, struct xiw_term *t);
enum xiw_proto_err xiw_term_build(const struct xiw_term *t, u8 *out,
				  size_t cap, size_t *out_len);
enum xiw_proto_err xiw_term_init(struct xiw_term *t, enum xiw_proto_err err,
				 const u8 *fpdu, size_t fpdu_len);

/* ---------------------------------------------------------------------- */
/* FPDU transmit and the resumable receive deframer (fpdu.c)              */
/* ---------------------------------------------------------------------- */

/**
 * struct xiw_slice - a read-only byte range
 * @p: first byte
 * @len: number of bytes
 */
struct xiw_slice {
	const u8 *p;
	size_t len;
};

/**
 * struct xiw_tx - transmit side framing state of one MPA connection
 * @crc: generate CRC32c (else the CRC field is zero)
 * @markers: insert markers every 512 octets
 * @stream_pos: position in the marker-inclusive FPDU stream (0 = first
 *	octet after the MPA Reply); only its value modulo 512 matters
 * @crc_fn: CRC provider, NULL for xiw_crc_update() (set after init)
 * @crc_ctx: argument of @crc_fn
 */
struct xiw_tx {
	bool crc;
	bool markers;
	u32 stream_pos;
	xiw_crc_fn crc_fn;
	void *crc_ctx;
};

void xiw_tx_init(struct xiw_tx *tx, bool crc, bool markers, u32 stream_pos);
enum xiw_proto_err xiw_fpdu_build(struct xiw_tx *tx,
				  const struct xiw_slice *ulpdu,
				  unsigned int nslices, u8 *out, size_t cap,
				  size_t *out_len);

/**
 * xiw_fpdu_trailer() - pad and CRC field for a zero-copy, marker-free FPDU
 * @crc: running CRC over ULPDU_Length and the ULPDU (from XIW_CRC_SEED)
 * @crc_on: CRC is in use (else the field is zero)
 * @ulpdu_len: ULPDU_Length
 * @out: pad octets followed by the CRC field
 *
 * Inline: every FPDU sent ends with it.
 *
 * Return: octets written to @out (4 to 7).
 */
static inline size_t xiw_fpdu_trailer(u32 crc, bool crc_on, u32 ulpdu_len,
				      u8 out[MPA_ALIGN + MPA_CRC_LEN])
{
	u32 pad = xiw_mpa_pad_len(ulpdu_len);

	memset(out, 0, MPA_ALIGN + MPA_CRC_LEN);
	if (crc_on)
		xiw_crc_put(xiw_crc_update(crc, out, pad), out + pad);
	return pad + MPA_CRC_LEN;
}

/**
 * enum xiw_rx_state - where the deframer is inside the current FPDU
 * @XIW_RX_HDR: collecting ULPDU_Length and the DDP/RDMAP header
 * @XIW_RX_DATA: handing out payload chunks
 * @XIW_RX_TRAILER: collecting pad and CRC
 * @XIW_RX_ERROR: a protocol error was reported; sticky until reset
 */
enum xiw_rx_state {
	XIW_RX_HDR,
	XIW_RX_DATA,
	XIW_RX_TRAILER,
	XIW_RX_ERROR,
};

/**
 * enum xiw_rx_event_type - what one xiw_rx_step() call produced
 * @XIW_RX_EV_NONE: all input consumed, nothing complete yet
 * @XIW_RX_EV_HDR: a segment header is complete (&xiw_rx.hdr is valid)
 * @XIW_RX_EV_DATA: a payload chunk, pointing into the caller's input;
 *	with &xiw_rx_event.end set also the end of the segment
 * @XIW_RX_EV_END: the segment is complete and its CRC verified
 */
enum xiw_rx_event_type {
	XIW_RX_EV_NONE,
	XIW_RX_EV_HDR,
	XIW_RX_EV_DATA,
	XIW_RX_EV_END,
};

/**
 * struct xiw_rx_event - result of one xiw_rx_step() call
 * @type: what happened
 * @data: %XIW_RX_EV_DATA: first payload byte (inside the input slice)
 * @len: %XIW_RX_EV_DATA: chunk length
 * @offset: %XIW_RX_EV_DATA: offset of @data within the segment payload
 * @end: %XIW_RX_EV_DATA: the segment's last chunk, its trailer taken in
 *	the same call and its CRC verified; no %XIW_RX_EV_END follows (only
 *	with &xiw_rx.join_end)
 * @whole: %XIW_RX_EV_HDR: the rest of the segment, its payload and its
 *	trailer, follows in the same input: xiw_rx_take_whole() may take it
 *	in one go (only with &xiw_rx.join_end and without markers); the
 *	payload is then @len octets at @data
 */
struct xiw_rx_event {
	enum xiw_rx_event_type type;
	const u8 *data;
	u32 len;
	u32 offset;
	bool end;
	bool whole;
};

/** XIW_RX_HDR_BUF - header bytes the deframer keeps (ULPDU_Length + max) */
#define XIW_RX_HDR_BUF		(MPA_HDR_LEN + XIW_RDMAP_HDR_MAX)

/**
 * struct xiw_rx - resumable receive deframer of one MPA connection
 * @crc: verify CRC32c
 * @markers: expect and strip markers
 * @join_end: where the last payload chunk of a segment and its whole
 *	trailer are in one call's input, take both and report the end with
 *	the chunk (&xiw_rx_event.end): one call less per segment, and the
 *	CRC is verified before that chunk is handed out.  Off after
 *	xiw_rx_init(); a consumer that handles &xiw_rx_event.end sets it.
 * @max_ulpdu: largest ULPDU_Length accepted (0: 65535)
 * @whole: the last event offered the rest of its segment
 *	(&xiw_rx_event.whole); cleared by the next call
 * @state: current state
 * @err: sticky error once @state is %XIW_RX_ERROR
 * @stream_pos: marker-inclusive stream position of the next octet
 * @fpdu_pos: stream position of the current FPDU's ULPDU_Length field
 * @crc_state: running CRC of the current FPDU
 * @mk: partially received marker
 * @mk_got: octets in @mk (0 when not inside a marker)
 * @raw: the current segment's ULPDU_Length and DDP/RDMAP header octets
 * @raw_got: octets in @raw
 * @raw_last: octets of the segment that just ended in @raw: set at its
 *	%XIW_RX_EV_END (which sets @raw_got to 0), cleared by the first octet
 *	of the next segment and by a deframing error; an error the caller
 *	finds at the end of a segment reports that segment's headers from it
 * @raw_need: octets of @raw needed (known once 4 are in)
 * @ulpdu_len: current ULPDU_Length
 * @info: opcode properties of the current segment
 * @hdr: decoded header of the current segment (valid after EV_HDR)
 * @data_off: payload octets handed out so far
 * @data_len: payload length of the current segment
 * @trl: pad and CRC octets (of a segment taken whole by
 *	xiw_rx_take_whole(), only where the CRC is on)
 * @trl_got: octets of the trailer taken
 * @trl_need: pad + 4
 * @segments: completed segments (progress counter)
 * @octets: octets consumed (progress counter, markers included)
 * @crc_fn: CRC provider, NULL for xiw_crc_update() (set after init)
 * @crc_ctx: argument of @crc_fn
 */
struct xiw_rx {
	bool crc;
	bool markers;
	bool join_end;
	bool whole;
	u32 max_ulpdu;
	enum xiw_rx_state state;
	enum xiw_proto_err err;
	u32 stream_pos;
	u32 fpdu_pos;
	u32 crc_state;
	u8 mk[MPA_MARKER_LEN];
	u8 mk_got;
	u8 raw[XIW_RX_HDR_BUF];
	u8 raw_got;
	u8 raw_last;
	u8 raw_need;
	u16 ulpdu_len;
	const struct xiw_rdmap_opinfo *info;
	struct xiw_rdmap_hdr hdr;
	u32 data_off;
	u32 data_len;
	u8 trl[MPA_ALIGN + MPA_CRC_LEN];
	u8 trl_got;
	u8 trl_need;
	u64 segments;
	u64 octets;
	xiw_crc_fn crc_fn;
	void *crc_ctx;
};

void xiw_rx_init(struct xiw_rx *rx, bool crc, bool markers, u32 stream_pos,
		 u32 max_ulpdu);
enum xiw_proto_err xiw_rx_step(struct xiw_rx *rx, const u8 *p, size_t len,
			       size_t *consumed, struct xiw_rx_event *ev);
enum xiw_proto_err xiw_rx_take_whole(struct xiw_rx *rx, const u8 *p,
				     size_t *consumed);

#ifdef __cplusplus
}
#endif

#endif /* XIW_PROTO_H */
