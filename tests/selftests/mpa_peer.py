#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""mpa_peer.py: a raw-TCP MPA peer for the xiw connection manager selftest.

Initiator (against an rping server on an xiw device):

  mpa_peer.py connect HOST PORT --send KIND --expect RESULT [--rping-send]

  KIND is the frame sent after the TCP handshake:
    req2      valid rev 2 Request, enhanced flag, IRD 4 / ORD 4
    req1      valid rev 1 Request
    p2p       rev 2 Request asking for peer-to-peer mode with a Read RTR
    markers   rev 2 Request asking for markers (xiw refuses them)
    badkey    wrong key
    badhdr    wrong key, announcing 100 octets of private data it never
              sends (the header alone is to be refused)
    badrev    revision 7
    bigpd     PD_Length 513
    garbage   64 random octets
    reply     a Reply where a Request is due
    trunc     the first 10 octets of a Request, then silence
    truncfin  the first 10 octets of a Request, then FIN
  RESULT is what must come back:
    reply2    accepting rev 2 Reply with the enhanced flag and IRD/ORD
    reply1    accepting rev 1 Reply
    reject    Reply with the R flag
    close     end of stream or reset without a single octet
  --rping-send: after an accepting Reply, send rping's first message (a
  Send carrying buffer address, rkey and size) and expect the server's
  RDMA Read Request for exactly that buffer.

Responder (for an rping client on an xiw device):

  mpa_peer.py serve ADDR PORT --mode MODE

    reject    answer the Request with a rev 2 Reply with the R flag
    silent    accept the TCP connection, never answer
    v1only    reset a rev 2 Request; answer the rev 1 retry that must
              follow on a new connection
    badfpdu   accept, and put an FPDU with a bad DDP version into the same
              segment as the Reply; expect xiw's TERMINATE for it

Prints "result: ..." lines; exit 0 when RESULT was seen, 1 otherwise.
"""

import argparse
import os
import select
import socket
import struct
import sys
import time

KEY_REQ = b"MPA ID Req Frame"
KEY_REP = b"MPA ID Rep Frame"
F_M, F_C, F_R, F_ENH = 0x80, 0x40, 0x20, 0x10
P2P, RTR_SEND = 0x8000, 0x4000
RTR_WRITE, RTR_READ = 0x8000, 0x4000


def frame(key, flags, rev, pdata=b"", ird=None, ord_=None, pd_len=None):
    body = b""
    if ird is not None:
        body = struct.pack(">HH", ird, ord_)
    body += pdata
    n = len(body) if pd_len is None else pd_len
    return key + struct.pack(">BBH", flags, rev, n) + body


def log(*a):
    print("#", *a, flush=True)


def recv_exact(s, n, deadline):
    """n octets, or fewer if the stream ends or the deadline passes."""
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        r, _, _ = select.select([s], [], [], left)
        if not r:
            break
        try:
            chunk = s.recv(n - len(buf))
        except ConnectionResetError:
            break
        if not chunk:
            break
        buf += chunk
    return buf


def read_frame(s, timeout):
    """(header dict or None, raw octets) of one MPA frame."""
    deadline = time.monotonic() + timeout
    raw = recv_exact(s, 20, deadline)
    if len(raw) < 20:
        return None, raw
    key = raw[:16]
    flags, rev, pd_len = struct.unpack(">BBH", raw[16:20])
    pd = recv_exact(s, pd_len, deadline)
    raw += pd
    f = {"key": key, "flags": flags, "rev": rev, "pd_len": pd_len, "pd": pd}
    if rev == 2 and flags & F_ENH and len(pd) >= 4:
        f["ird"], f["ord"] = struct.unpack(">HH", pd[:4])
    return f, raw


def stream_closed(s, timeout):
    """True if the peer closes (or resets) without sending anything."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            log("still open after", timeout, "s")
            return False
        r, _, _ = select.select([s], [], [], left)
        if not r:
            continue
        try:
            data = s.recv(4096)
        except (ConnectionResetError, ConnectionAbortedError):
            log("connection reset")
            return True
        if not data:
            log("end of stream")
            return True
        log("unexpected octets:", data[:32].hex())
        return False


def fpdu(ulpdu, crc=False):
    """MPA FPDU: ULPDU_Length, ULPDU, pad, CRC (zero: CRC not agreed)."""
    if crc:
        raise ValueError("CRC not implemented here")
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * ((4 - len(body) % 4) % 4)
    return body + b"\0\0\0\0"


def send_ulpdu(opcode, qn, msn, payload=b"", ddp_version=1):
    """Untagged DDP segment (L=1) with the given RDMAP opcode."""
    ddp = 0x40 | (ddp_version & 3)
    rdmap = 0x40 | opcode
    return struct.pack(">BBIIII", ddp, rdmap, 0, qn, msn, 0) + payload


def read_fpdu(s, timeout):
    deadline = time.monotonic() + timeout
    hdr = recv_exact(s, 2, deadline)
    if len(hdr) < 2:
        return None
    (n,) = struct.unpack(">H", hdr)
    total = n + (4 - (n + 2) % 4) % 4 + 4
    rest = recv_exact(s, total, deadline)
    if len(rest) < total:
        return None
    return rest[:n]


def expect_frame(f, raw, want):
    if want == "close":
        log("got", raw[:40].hex() if raw else "nothing")
        return not raw
    if f is None:
        log("no complete frame:", raw.hex())
        return False
    log("frame: key=%r flags=0x%02x rev=%d pd_len=%d ird=%s ord=%s" %
        (f["key"], f["flags"], f["rev"], f["pd_len"], f.get("ird"),
         f.get("ord")))
    if f["key"] != KEY_REP:
        log("not a Reply")
        return False
    if want == "reject":
        return bool(f["flags"] & F_R)
    if f["flags"] & F_R:
        log("rejected")
        return False
    if f["flags"] & F_M:
        log("markers asked for")
        return False
    if want == "reply1":
        return f["rev"] == 1 and not f["flags"] & F_ENH
    # reply2: enhanced, IRD/ORD words present and sane
    return (f["rev"] == 2 and f["flags"] & F_ENH and "ird" in f and
            (f["ird"] & 0x3fff) >= 1)


def do_connect(a):
    pdata = b"xiw-cm-selftest"
    kinds = {
        "req2": frame(KEY_REQ, F_ENH, 2, pdata, 4, 4),
        "req1": frame(KEY_REQ, 0, 1, pdata),
        "p2p": frame(KEY_REQ, F_ENH, 2, pdata, P2P | 4, RTR_READ | 4),
        "markers": frame(KEY_REQ, F_M | F_ENH, 2, pdata, 4, 4),
        "badkey": frame(b"MPA ID Bad Frame", F_ENH, 2, pdata, 4, 4),
        "badhdr": b"MPA ID Bad Frame" + bytes([F_ENH, 2, 0, 100]),
        "badrev": frame(KEY_REQ, 0, 7, pdata),
        "bigpd": frame(KEY_REQ, 0, 1, b"x" * 513),
        "garbage": os.urandom(64),
        "reply": frame(KEY_REP, F_ENH, 2, pdata, 4, 4),
        "trunc": frame(KEY_REQ, F_ENH, 2, pdata, 4, 4)[:10],
        "truncfin": frame(KEY_REQ, F_ENH, 2, pdata, 4, 4)[:10],
    }
    s = socket.create_connection((a.host, a.port), timeout=a.timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(kinds[a.send])
    if a.send == "truncfin":
        s.shutdown(socket.SHUT_WR)
    if a.expect == "close":
        ok = stream_closed(s, a.timeout)
    else:
        f, raw = read_frame(s, a.timeout)
        ok = expect_frame(f, raw, a.expect)
    print("result: %s %s" % (a.send, "as expected" if ok else "UNEXPECTED"))
    if ok and a.rping_send:
        ok = rping_first_message(s, a.timeout)
    s.close()
    return 0 if ok else 1


def rping_first_message(s, timeout):
    """Send rping's rdma_info; the server must RDMA-Read that buffer."""
    buf, rkey, size = 0x1122334455667788, 0x00abcd01, 64
    info = struct.pack(">QII", buf, rkey, size)
    s.sendall(fpdu(send_ulpdu(3, 0, 1, info)))
    u = read_fpdu(s, timeout)
    if u is None or len(u) < 2:
        log("no FPDU came back")
        print("result: rping-send UNEXPECTED")
        return False
    opcode = u[1] & 0x0f
    log("FPDU back: %d octets, ddp 0x%02x, opcode %d" % (len(u), u[0], opcode))
    if opcode != 1 or len(u) < 18 + 28:
        print("result: rping-send UNEXPECTED (not a Read Request)")
        return False
    sink_stag, sink_to, rsize, src_stag, src_to = struct.unpack(
        ">IQIIQ", u[18:46])
    log("Read Request: size %d src stag 0x%x to 0x%x" %
        (rsize, src_stag, src_to))
    ok = rsize == size and src_stag == rkey and src_to == buf
    print("result: rping-send %s" % ("as expected" if ok else "UNEXPECTED"))
    return ok


def accept_one(ls, timeout):
    ls.settimeout(timeout)
    c, peer = ls.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    log("connection from", peer)
    return c


def do_serve(a):
    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((a.addr, a.port))
    ls.listen(4)
    print("result: listening", flush=True)
    c = accept_one(ls, a.timeout)
    f, raw = read_frame(c, a.timeout)
    if f is None or f["key"] != KEY_REQ:
        print("result: no Request")
        return 1
    log("Request: flags=0x%02x rev=%d pd_len=%d" %
        (f["flags"], f["rev"], f["pd_len"]))
    if a.mode == "reject":
        c.sendall(frame(KEY_REP, F_R | F_ENH, 2, b"go away", 0, 0))
        stream_closed(c, a.timeout)
        print("result: rejected")
        return 0
    if a.mode == "silent":
        # Hold the connection until the initiator gives up.
        ok = stream_closed(c, a.timeout)
        print("result: initiator %s" % ("gave up" if ok else "hung"))
        return 0 if ok else 1
    if a.mode == "v1only":
        if f["rev"] != 2:
            print("result: first Request was rev %d" % f["rev"])
            return 1
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                     struct.pack("ii", 1, 0))
        c.close()
        c = accept_one(ls, a.timeout)
        f, raw = read_frame(c, a.timeout)
        if f is None or f["key"] != KEY_REQ or f["rev"] != 1:
            print("result: no rev 1 retry: %r" % (f,))
            return 1
        c.sendall(frame(KEY_REP, 0, 1))
        u = read_fpdu(c, a.timeout)
        ok = u is not None and len(u) >= 2
        if ok:
            log("first FPDU after rev 1: opcode %d" % (u[1] & 0x0f))
        print("result: rev 1 retry %s" % ("connected" if ok else "failed"))
        return 0 if ok else 1
    if a.mode == "badfpdu":
        ird = f.get("ord", 1) & 0x3fff
        rep = frame(KEY_REP, F_ENH, 2, b"", max(ird, 1), 1)
        bad = fpdu(send_ulpdu(3, 0, 1, b"\0" * 16, ddp_version=2))
        c.sendall(rep + bad)		# one segment: Reply and FPDU
        deadline = time.monotonic() + a.timeout
        while time.monotonic() < deadline:
            u = read_fpdu(c, deadline - time.monotonic())
            if u is None:
                break
            op = u[1] & 0x0f
            log("FPDU: opcode %d, %d octets" % (op, len(u)))
            if op == 7:
                layer, code = u[18] >> 4, u[19]
                log("TERMINATE layer %d etype %d code 0x%02x" %
                    (layer, u[18] & 0x0f, code))
                ok = layer == 1		# DDP layer error
                print("result: TERMINATE %s" %
                      ("as expected" if ok else "UNEXPECTED"))
                return 0 if ok else 1
        print("result: no TERMINATE")
        return 1
    return 1


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("connect")
    c.add_argument("host")
    c.add_argument("port", type=int)
    c.add_argument("--send", required=True,
                   choices=["req2", "req1", "p2p", "markers", "badkey",
                            "badhdr", "badrev", "bigpd", "garbage", "reply",
                            "trunc", "truncfin"])
    c.add_argument("--expect", required=True,
                   choices=["reply2", "reply1", "reject", "close"])
    c.add_argument("--rping-send", action="store_true")
    c.add_argument("--timeout", type=float, default=15)
    s = sub.add_parser("serve")
    s.add_argument("addr")
    s.add_argument("port", type=int)
    s.add_argument("--mode", required=True,
                   choices=["reject", "silent", "v1only", "badfpdu"])
    s.add_argument("--timeout", type=float, default=30)
    a = p.parse_args()
    try:
        return do_connect(a) if a.cmd == "connect" else do_serve(a)
    except (OSError, socket.timeout) as e:
        print("result: error %s" % e)
        return 1


if __name__ == "__main__":
    sys.exit(main())
