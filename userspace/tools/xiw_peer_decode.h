// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer decode: turn a capture of iWARP traffic into a listing of its
// MPA frames and DDP segments, using the protocol core (proto/) for all
// framing, CRC and header checks.
//
// Input is either a capture file that libpcap reads (pcap in either byte
// order with microsecond or nanosecond timestamps, or pcapng; link types
// Ethernet, Linux cooked SLL and SLL2, raw IP) carrying IPv4/IPv6 TCP, or
// any other file, taken as one direction of a byte stream.  A capture is
// reassembled per TCP direction by sequence number: retransmitted and
// overlapping octets are dropped, out-of-order segments wait for the gap
// before them to fill, and a gap that never fills ends the decoding of
// that direction (reported as an error).  A capture cut short is decoded
// up to the cut, with a note saying where it ended.
//
// Listing of one direction (every line starts with the caller's prefix):
//
//   MPA Request rev 2 crc=1 markers=0 enhanced p2p=0 ird=4 ord=4 pdata=12
//     framing crc=1 (negotiated) markers=0 (peer frame)
//     #1 @32 Send MSN 1 MO 0 L len 100 (QN 0)
//     #2 @152 RDMA Write STag 0x00001234 TO 0x7f00 L len 4096
//     ! error XIW_ERR_MPA_CRC at stream octet 4260 (...)
//     2 segments, 4276 octets, 1 errors
//
// "@N" and "stream octet N" count octets of that direction's stream from
// its first octet (the first octet of the MPA key), markers included; @N
// is where the FPDU's ULPDU_Length field sits.  "len" is the segment's
// payload after the DDP/RDMAP headers.  The octets of the summary are the
// stream octets decoded.
#ifndef XIW_PEER_DECODE_H
#define XIW_PEER_DECODE_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace xiw::peer {

// crc, markers: -1 = as the MPA frames in the capture say, 0/1 = forced.
// hex: dump the first 64 payload octets of every segment.
struct DecodeOptions {
	int crc = -1;
	int markers = -1;
	bool hex = false;
};

// Decode one direction of a byte stream from its first octet.  Normally
// an MPA Request or Reply frame comes first; as the other direction's
// frame is not known here, CRC follows this frame's C flag and markers
// are recognised from the stream (the FPDU stream starts with a marker at
// position 0 when they are in use).  A stream that does not start with an
// MPA key is FPDUs from octet 0 with crc/markers as forced, else off.
// Appends lines (each prefixed with @prefix) to @out; returns the number
// of errors found (malformed frames, CRC errors, deframer errors).
int decode_stream(const uint8_t *p, size_t len, const DecodeOptions &o,
		  std::string &out, const std::string &prefix = "");

// Decode a file: a capture (every TCP direction in order of appearance, the
// two directions of a connection together, each introduced by a line
// "src > dst") or else one raw stream.  Returns the errors found, or -1
// when the file cannot be read or is a capture format not understood
// (@out then holds the reason).
int decode_file(const std::string &path, const DecodeOptions &o,
		std::string &out);

// The subcommand; argv[0] is its name ("decode"):
//   decode [--crc|--no-crc] [--markers|--no-markers] [--hex] FILE
// Prints the listing to stdout.  Exit status 0 if no errors were found,
// 1 if some were, 2 for a usage or I/O error.
int decode_main(int argc, char **argv);

// "RDMAP", "DDP" or "LLP": the name of a TERMINATE layer.
const char *term_layer_name(uint8_t layer);

}  // namespace xiw::peer

#endif
