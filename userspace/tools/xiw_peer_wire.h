// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's end of an iWARP connection: a plain TCP socket, MPA frames
// and FPDUs built and parsed by the protocol core (the module's own
// drivers/infiniband/sw/xiw/proto), and the means to break every rule a
// well-behaved peer keeps: raw header octets, a wrong CRC, a forged
// ULPDU_Length, a segment written one octet at a time.

#ifndef XIW_PEER_WIRE_H
#define XIW_PEER_WIRE_H

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <stdexcept>
#include <sys/types.h>
#include <string>
#include <vector>

extern "C" {
#include "xiw_proto.h"
}

namespace xiw::peer {

using Bytes = std::vector<uint8_t>;

// A scenario's assertion failed: the message says what was expected.
struct Failure : std::runtime_error {
	using std::runtime_error::runtime_error;
};

// One DDP segment as it left the peer or arrived from the target.
struct Segment {
	xiw_rdmap_hdr hdr = {};
	Bytes raw_hdr;		// DDP + RDMAP header octets as on the wire
	Bytes payload;		// ULP payload (for TERMINATE: the body after the control word)
	uint16_t ulpdu_len = 0;
};

// What to send: a header (opcode picks the layout), a payload, and the
// deliberate mistakes.
struct SegSpec {
	xiw_rdmap_hdr hdr = {};
	Bytes payload;
	int ddp_ctrl = -1;	// replace DDP control octet (T, L, DV)
	int rdmap_ctrl = -1;	// replace RDMAP control octet (RV, opcode)
	int ulpdu_len = -1;	// replace the ULPDU_Length field (no re-framing)
	bool bad_crc = false;	// flip the CRC field (or make it non-zero without CRC)
	bool bytewise = false;	// one write() per octet
};

enum class MpaResult { Frame, Closed, Timeout, Malformed };

struct MpaIn {
	MpaResult result = MpaResult::Timeout;
	xiw_mpa_frame frame = {};
	Bytes pdata;		// ULP private data (after the enhanced words)
	Bytes raw;
	xiw_proto_err err = XIW_OK;
};

class Conn {
public:
	Conn() = default;
	~Conn();
	Conn(const Conn &) = delete;
	Conn &operator=(const Conn &) = delete;

	// TCP connect to a numeric IPv4 or IPv6 address; throws Failure.
	// @rcvbuf: SO_RCVBUF set before connecting (a small window), @mss:
	// TCP_MAXSEG (the MSS we announce); 0: the defaults.
	void connect(const std::string &addr, uint16_t port, double timeout, int rcvbuf = 0,
		     int mss = 0);
	// The passive end: listen on @addr and @port, then take the one
	// connection that comes within @timeout; throws Failure.  listen()
	// returns before the peer connects, so that it can be told to.
	void listen(const std::string &addr, uint16_t port);
	void accept(double timeout);
	// A connection to accept came within @timeout (listening again after
	// accept(), while the accepted one stays open).
	bool connection_waiting(double timeout);
	void close();
	void shutdown_write();
	void abort();		// close with a TCP RST (SO_LINGER 0)
	bool is_open() const { return fd_ >= 0; }

	// Raw octets; false when the connection is gone (reset or closed).
	bool write(const uint8_t *p, size_t n, bool bytewise = false);
	bool write(const Bytes &b, bool bytewise = false) { return write(b.data(), b.size(), bytewise); }

	// MPA connection setup.
	static Bytes mpa_frame(const xiw_mpa_frame &f);
	MpaIn read_mpa(double timeout);
	// Full operation from here: framing parameters for both directions.
	void start_fpdus(bool crc, bool markers_tx, bool markers_rx);

	// Frame and send one segment; false when the connection is gone.
	bool send(const SegSpec &s);
	Bytes frame(const SegSpec &s);
	// Marker-inclusive position of the next octet frame() builds.
	uint32_t tx_pos() const { return tx_.stream_pos; }

	// Without waiting: write what the socket takes of @n octets at @p;
	// the octets written, or -1 once the connection is gone.
	ssize_t send_some(const uint8_t *p, size_t n);
	// Read what arrives within @timeout seconds (0: only what is there)
	// and deframe it; false once the stream has ended or broke.
	bool pump(double timeout);
	// The next segment deframed so far, without waiting.
	std::optional<Segment> take();
	int fd() const { return fd_; }

	// The next segment from the target, nullopt on timeout or when the
	// stream ended (see closed()) or broke (see rx_error()).
	std::optional<Segment> recv(double timeout);
	// Wait for the end of the stream (FIN or RST), discarding segments.
	bool wait_closed(double timeout);

	bool closed() const { return eof_; }
	bool reset() const { return rst_; }
	xiw_proto_err rx_error() const { return rx_err_; }
	uint64_t rx_octets() const { return rx_octets_; }

	// Per-queue next MSN of what we send (QN 0..3), from 1.
	uint32_t next_msn(unsigned int qn) { return msn_[qn]++; }
	uint32_t peek_msn(unsigned int qn) const { return msn_[qn]; }

	bool crc = false, markers_tx = false, markers_rx = false;

private:
	bool fill(double timeout);	// read more octets into in_
	void deframe();
	void reset_state();

	int fd_ = -1, lfd_ = -1;
	bool eof_ = false, rst_ = false, fpdu_mode_ = false;
	Bytes in_;
	size_t in_off_ = 0;
	xiw_tx tx_ = {};
	xiw_rx rx_ = {};
	xiw_proto_err rx_err_ = XIW_OK;
	std::optional<Segment> cur_;
	std::deque<Segment> segs_;
	uint64_t rx_octets_ = 0;
	uint32_t msn_[4] = { 1, 1, 1, 1 };
};

// The DDP + RDMAP header octets @s puts on the wire (overrides applied).
Bytes header(const SegSpec &s);

// Headers of the common segments.
xiw_rdmap_hdr untagged(uint8_t opcode, uint32_t qn, uint32_t msn, uint32_t mo, bool last);
xiw_rdmap_hdr tagged(uint8_t opcode, uint32_t stag, uint64_t to, bool last);

std::string hex(const uint8_t *p, size_t n);
std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
std::string term_str(const xiw_term_code &c);

} // namespace xiw::peer

#endif
