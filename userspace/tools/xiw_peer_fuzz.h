// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer fuzz and replay: random FPDU streams against a live QP.
//
// A connection is a list of operations (Op): frames (FrameRec, one DDP
// segment each, valid or mutated on purpose), writes that hand the framed
// octets to TCP in chunks of recorded sizes, waits for the target's
// receive completions and for Read Responses, and an ending.  The
// generator (Gen) draws them from a seeded Rng and feeds them to a Sink;
// the executor in xiw_peer_fuzz.cc is the Sink that runs them against
// xiw-target and judges what comes back.  A connection that ends in a
// finding is saved as a Scenario, a text file that `xiw-peer replay`
// runs again.  Frames name the target's STags and Tagged Offsets relative
// to the regions it advertised (Ref), so a replay against a new target
// process sends the same octets except for those fields.
//
// Exposed here for the unit tests: Rng, the scenario format, the frame
// encoder with its model of the target's deframer, and the generator.

#ifndef XIW_PEER_FUZZ_H
#define XIW_PEER_FUZZ_H

#include "xiw_peer_wire.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

// For FrameRec's comparison (the struct is the protocol core's, in C).
inline bool operator==(const xiw_term_code &a, const xiw_term_code &b)
{
	return a.layer == b.layer && a.etype == b.etype && a.ecode == b.ecode;
}

namespace xiw::peer::fuzz {

// splitmix64: a sequence that is the same on every platform (the
// standard library's distributions are not).
class Rng {
public:
	explicit Rng(uint64_t seed) : s_(seed) {}
	uint64_t next()
	{
		uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		return z ^ (z >> 31);
	}
	// Uniform in [0, n); 0 when n is 0.
	uint64_t below(uint64_t n) { return n ? uint64_t((unsigned __int128)next() * n >> 64) : 0; }
	// Uniform in [lo, hi].
	uint64_t range(uint64_t lo, uint64_t hi) { return lo + below(hi - lo + 1); }
	bool chance(double p) { return double(next() >> 11) * 0x1.0p-53 < p; }

private:
	uint64_t s_;
};

// The seed of connection @conn of a run with @seed.
uint64_t conn_seed(uint64_t seed, uint64_t conn);

// The regions xiw-target advertises on accept, in this order.
enum Region : int8_t { kRw, kRo, kWo, kForeign, kDead, kNumRegions };
extern const char *const kRegionNames[kNumRegions];

struct Regions {
	uint32_t stag[kNumRegions] = {};
	uint64_t base[kNumRegions] = {};
	uint64_t len = 65536;
};

// A field value: absolute (region < 0), or @v added to a region's STag
// (STag fields) or base address (Tagged Offset fields), modulo the
// field's width.
struct Ref {
	int8_t region = -1;
	uint64_t v = 0;

	static Ref abs(uint64_t v) { return { -1, v }; }
	static Ref rel(Region r, uint64_t delta) { return { r, delta }; }
	uint32_t stag(const Regions &g) const { return region < 0 ? uint32_t(v) : uint32_t(g.stag[region] + v); }
	uint64_t to(const Regions &g) const { return region < 0 ? v : g.base[region] + v; }
	bool operator==(const Ref &) const = default;
};

// What the target must do about a frame (and so the connection).
enum class Expect : uint8_t {
	None,	// valid: no TERMINATE, the stream goes on
	May,	// a TERMINATE or a close is right, so is going on
	Must,	// a TERMINATE, then the close
	Model,	// as the model of the target's deframer says (Encoder)
};

// One DDP segment to send, with the mistakes to put in it.
struct FrameRec {
	uint8_t op = RDMAP_OP_SEND;	// the opcode the header is built for
	bool last = true;
	Ref stag, to;			// tagged; Atomic Request: its target
	uint32_t qn = 0, msn = 0, mo = 0;	// untagged
	Ref inv;			// untagged RsvdULP (Invalidate STag)
	// Read Request
	uint32_t sink_stag = 0, size = 0;
	uint64_t sink_to = 0;
	Ref src_stag, src_to;
	// Atomic Request (target in stag/to), Immediate Data, TERMINATE
	uint8_t aop = 0;
	uint32_t req_id = 0;
	uint64_t adata = 0, imm = 0;
	xiw_term_code term = {};
	// payload: @len octets of pattern @seed from pattern offset @first
	uint32_t len = 0, seed = 0;
	uint64_t first = 0;
	// after framing
	int ddp_ctrl = -1, rdmap_ctrl = -1;	// replace the control octets
	int ulpdu_len = -1;		// replace ULPDU_Length (CRC as built)
	std::vector<std::pair<uint32_t, uint8_t>> flips;	// XOR at a frame octet (markers not counted)
	std::vector<std::pair<uint32_t, uint8_t>> mflips;	// XOR at octet N of the frame's markers
	int trunc = -1;			// send only the first N octets (markers counted)
	uint32_t garb_len = 0, garb_seed = 0;	// random octets after the frame
	std::string mut;		// the mutation's name; empty: none
	Expect expect = Expect::None;

	bool operator==(const FrameRec &) const = default;
};

// How a connection ends once the generator is done with it.
enum class End : uint8_t {
	Wait,		// after a mutation: the target's TERMINATE and close
	Fin,		// our orderly close: the target closes in order too
	Disconnect,	// the target's rdma_disconnect(): its FIN, ours
	PeerTerm,	// we sent a TERMINATE: the target closes
	Abort,		// our reset, whatever is outstanding
};
const char *end_name(End e);

struct Op {
	enum Kind : uint8_t { Frame, Write, Sync, Reads, Finish } kind = Frame;
	FrameRec f;			// Frame
	std::vector<uint32_t> chunks;	// Write: one send() each
	uint64_t n = 0;			// Sync: receives done; Reads: Read Responses done
	End end = End::Wait;		// Finish

	bool operator==(const Op &) const = default;
};

// The MPA Request and the target's side of one connection.
struct ConnParams {
	uint8_t rev = 2;
	bool crc = false;
	bool markers = false;	// connect to a device that sends and wants markers
	bool markers_rx = false;	// ask for markers towards us as well
	bool p2p = false;
	uint8_t rtr = 0;	// XIW_MPA_RTR_* offered with p2p
	uint16_t ird = 8, ord = 8;	// the Request's
	uint32_t recvs = 64, rlen = 1024;	// the target's receives
	uint16_t t_ird = 8, t_ord = 8;	// the target's accept

	bool operator==(const ConnParams &) const = default;
};

// A saved connection: what `xiw-peer replay` runs.
struct Scenario {
	uint64_t seed = 0, conn = 0;
	std::string finding;	// what happened when it was recorded
	ConnParams p;
	Regions regions;	// as advertised when it was recorded (informative)
	std::vector<Op> ops;
};

std::string format_op(const Op &op);
std::string format_scenario(const Scenario &s);
// Parse a scenario file's text; false with @err ("line N: why") when it
// is not one.
bool parse_scenario(const std::string &text, Scenario &s, std::string &err);

// What the model of the target's deframer makes of the stream so far.
enum class ModelState : uint8_t {
	InSync,	// every frame deframed as sent, no error
	Desync,	// a frame's octets were not deframed as that frame
	Error,	// a deframing error (a TERMINATE is due)
};

// What the target must do about frame @f, given what the model made of
// the stream up to and with it: a deframing error needs a TERMINATE; a
// mistake in the octets that left the frames out of step, or changed a
// length without (a ULPDU_Length within the pad), may get anything.
Expect resolve(const FrameRec &f, ModelState m);

// Frames to octets: the header through the protocol core, the framing
// through Conn::frame() (CRC, markers, padding), then the mistakes.
// Everything encoded also goes through the deframer the target runs
// (xiw_rx_step(), configured as the target's receive side), which tells
// whether a byte-level mistake broke the framing.
class Encoder {
public:
	Encoder(bool crc, bool markers);
	Bytes encode(const FrameRec &f, const Regions &g);
	ModelState model() const { return state_; }
	xiw_proto_err model_err() const { return rx_.err; }
	uint64_t frames() const { return frames_; }

private:
	Conn framer_;	// no socket: only its transmit framing state
	xiw_rx rx_ = {};
	ModelState state_ = ModelState::InSync;
	uint64_t frames_ = 0;
	bool markers_;
};

// The octets of a frame's payload.
Bytes payload(const FrameRec &f);

// The receiver of a generator's operations.  Every call but end()
// returns false once the connection is over: the generator stops.
class Sink {
public:
	virtual ~Sink() = default;
	virtual bool frame(const FrameRec &f) = 0;
	virtual bool write(const std::vector<uint32_t> &chunks) = 0;
	virtual bool sync(uint64_t min) = 0;
	virtual bool reads(uint64_t n) = 0;
	virtual void end(End e) = 0;
	virtual size_t pending() const = 0;	// encoded, not yet written
	virtual ModelState model() const = 0;
};

// What the connection agreed on, for the generator.
struct Agreed {
	bool crc = false, markers_tx = false;
	bool p2p = false;
	uint8_t rtr = 0;	// the one RTR type agreed
	uint16_t ord = 1;	// Read Requests we may have outstanding
};

struct GenConfig {
	double mutate = 0.002;	// chance of each frame being the mutated one
	uint64_t frames = 2000;	// frames at most (drawn from 1..frames), then an end
	std::function<bool(uint64_t frames)> stop;	// true: end the connection now
};

// Draw one connection: its parameters, then (once connected) its
// operations.
ConnParams draw_params(Rng &rng, bool markers_dev);
void generate(Rng &rng, const ConnParams &p, const Agreed &a, const GenConfig &cfg,
	      Sink &sink);

// The subcommands; argv[0] is their name.
int fuzz_main(int argc, char **argv);
int replay_main(int argc, char **argv);

} // namespace xiw::peer::fuzz

namespace xiw::peer {
using fuzz::fuzz_main;
using fuzz::replay_main;
} // namespace xiw::peer

#endif
