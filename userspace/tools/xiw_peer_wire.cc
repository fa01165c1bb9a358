// SPDX-License-Identifier: GPL-2.0
//
// xiw-peer's end of the wire: see xiw_peer_wire.h.

#include "xiw_peer_wire.h"
#include "xiw_peer_decode.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <chrono>
#include <cstring>

namespace xiw::peer {

namespace {

using Clock = std::chrono::steady_clock;

int ms_left(Clock::time_point end)
{
	auto d = std::chrono::duration_cast<std::chrono::milliseconds>(end - Clock::now()).count();
	return d < 0 ? 0 : int(d);
}

Clock::time_point deadline(double secs)
{
	return Clock::now() + std::chrono::microseconds(int64_t(secs * 1e6));
}

} // namespace

std::string hex(const uint8_t *p, size_t n)
{
	static const char d[] = "0123456789abcdef";
	std::string s;

	for (size_t i = 0; i < n; i++) {
		s += d[p[i] >> 4];
		s += d[p[i] & 15];
	}
	return s;
}

std::string fmt(const char *f, ...)
{
	char b[512];
	va_list ap;

	va_start(ap, f);
	vsnprintf(b, sizeof(b), f, ap);
	va_end(ap);
	return b;
}

std::string term_str(const xiw_term_code &c)
{
	char b[48];

	snprintf(b, sizeof(b), "%s/%u/0x%02x", term_layer_name(c.layer), c.etype, c.ecode);
	return b;
}

xiw_rdmap_hdr untagged(uint8_t opcode, uint32_t qn, uint32_t msn, uint32_t mo, bool last)
{
	xiw_rdmap_hdr h = {};

	h.opcode = opcode;
	h.qn = qn;
	h.msn = msn;
	h.mo = mo;
	h.last = last;
	return h;
}

xiw_rdmap_hdr tagged(uint8_t opcode, uint32_t stag, uint64_t to, bool last)
{
	xiw_rdmap_hdr h = {};

	h.opcode = opcode;
	h.tagged = true;
	h.stag = stag;
	h.to = to;
	h.last = last;
	return h;
}

Conn::~Conn()
{
	close();
}

void Conn::close()
{
	if (fd_ >= 0)
		::close(fd_);
	fd_ = -1;
	if (lfd_ >= 0)
		::close(lfd_);
	lfd_ = -1;
}

void Conn::shutdown_write()
{
	if (fd_ >= 0)
		::shutdown(fd_, SHUT_WR);
}

void Conn::abort()
{
	linger l = { 1, 0 };

	if (fd_ < 0)
		return;
	setsockopt(fd_, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close();
}

namespace {

socklen_t sockaddr_of(const std::string &addr, uint16_t port, sockaddr_storage &ss)
{
	auto *s4 = reinterpret_cast<sockaddr_in *>(&ss);
	auto *s6 = reinterpret_cast<sockaddr_in6 *>(&ss);

	ss = {};
	if (inet_pton(AF_INET, addr.c_str(), &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return sizeof(*s4);
	}
	if (inet_pton(AF_INET6, addr.c_str(), &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return sizeof(*s6);
	}
	throw Failure("not a numeric address: " + addr);
}

} // namespace

void Conn::listen(const std::string &addr, uint16_t port)
{
	sockaddr_storage ss;
	socklen_t sl = sockaddr_of(addr, port, ss);
	int one = 1;

	lfd_ = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (lfd_ < 0)
		throw Failure(std::string("socket: ") + strerror(errno));
	setsockopt(lfd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (::bind(lfd_, reinterpret_cast<sockaddr *>(&ss), sl) || ::listen(lfd_, 1))
		throw Failure(std::string("listen: ") + strerror(errno));
}

void Conn::accept(double timeout)
{
	pollfd pf = { lfd_, POLLIN, 0 };
	int one = 1;

	if (poll(&pf, 1, int(timeout * 1000)) != 1)
		throw Failure("no TCP connection from the target in time");
	if (fd_ >= 0)
		::close(fd_);
	fd_ = ::accept4(lfd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd_ < 0)
		throw Failure(std::string("accept: ") + strerror(errno));
	::close(lfd_);
	lfd_ = -1;
	setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	reset_state();
}

bool Conn::connection_waiting(double timeout)
{
	pollfd pf = { lfd_, POLLIN, 0 };

	return lfd_ >= 0 && poll(&pf, 1, int(timeout * 1000)) == 1;
}

void Conn::reset_state()
{
	in_.clear();
	in_off_ = 0;
	eof_ = rst_ = fpdu_mode_ = false;
	rx_err_ = XIW_OK;
	segs_.clear();
	cur_.reset();
	rx_octets_ = 0;
	for (auto &m : msn_)
		m = 1;
}

void Conn::connect(const std::string &addr, uint16_t port, double timeout, int rcvbuf, int mss)
{
	sockaddr_storage ss;
	socklen_t sl = sockaddr_of(addr, port, ss);

	fd_ = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd_ < 0)
		throw Failure(std::string("socket: ") + strerror(errno));
	int one = 1;
	setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	// Before connect(): the window scale is agreed in the handshake.
	if (rcvbuf && setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)))
		throw Failure(std::string("SO_RCVBUF: ") + strerror(errno));
	if (mss && setsockopt(fd_, IPPROTO_TCP, TCP_MAXSEG, &mss, sizeof(mss)))
		throw Failure(std::string("TCP_MAXSEG: ") + strerror(errno));
	if (::connect(fd_, reinterpret_cast<sockaddr *>(&ss), sl) && errno != EINPROGRESS)
		throw Failure(std::string("connect: ") + strerror(errno));
	pollfd pf = { fd_, POLLOUT, 0 };
	if (poll(&pf, 1, int(timeout * 1000)) != 1)
		throw Failure("TCP connect timed out");
	int err = 0;
	socklen_t el = sizeof(err);
	getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &el);
	if (err)
		throw Failure(std::string("TCP connect: ") + strerror(err));
	reset_state();
}

bool Conn::write(const uint8_t *p, size_t n, bool bytewise)
{
	auto end = deadline(20);

	while (n) {
		if (fd_ < 0 || rst_)
			return false;
		ssize_t r = ::send(fd_, p, bytewise ? 1 : n, MSG_NOSIGNAL);
		if (r > 0) {
			p += r;
			n -= size_t(r);
			if (bytewise)
				usleep(200);	// one octet per TCP segment, mostly
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN) {
			pollfd pf = { fd_, POLLOUT, 0 };
			if (poll(&pf, 1, ms_left(end)) != 1)
				return false;
			continue;
		}
		if (r < 0 && (errno == ECONNRESET || errno == EPIPE))
			rst_ = eof_ = true;
		return false;
	}
	return true;
}

ssize_t Conn::send_some(const uint8_t *p, size_t n)
{
	for (;;) {
		if (fd_ < 0 || rst_)
			return -1;
		ssize_t r = ::send(fd_, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		if (errno == ECONNRESET || errno == EPIPE)
			rst_ = eof_ = true;
		return -1;
	}
}

bool Conn::pump(double timeout)
{
	// fill() reads one buffer at most; a zero timeout takes what is there.
	bool more = fill(timeout);
	while (more && timeout == 0 && in_.size() - in_off_ < (1u << 20)) {
		deframe();
		more = fill(0);
	}
	deframe();
	return !eof_ && !rx_err_;
}

std::optional<Segment> Conn::take()
{
	if (segs_.empty())
		return std::nullopt;
	Segment s = std::move(segs_.front());
	segs_.pop_front();
	return s;
}

bool Conn::fill(double timeout)
{
	if (fd_ < 0 || eof_)
		return false;
	pollfd pf = { fd_, POLLIN, 0 };
	int r = poll(&pf, 1, int(timeout * 1000));
	if (r <= 0)
		return false;
	uint8_t buf[65536];
	ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
	if (n == 0) {
		eof_ = true;
		return false;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return true;
		eof_ = true;
		rst_ = errno == ECONNRESET;
		return false;
	}
	if (in_off_ && in_off_ == in_.size()) {
		in_.clear();
		in_off_ = 0;
	}
	in_.insert(in_.end(), buf, buf + n);
	rx_octets_ += uint64_t(n);
	return true;
}

Bytes Conn::mpa_frame(const xiw_mpa_frame &f)
{
	Bytes out(MPA_RR_HDR_LEN + MPA_MAX_PD_LEN + MPA_V2_HDR_LEN);
	size_t n;
	xiw_proto_err e = xiw_mpa_frame_build(&f, out.data(), out.size(), &n);

	if (e)
		throw Failure(std::string("cannot build MPA frame: ") + xiw_proto_err_name(e));
	out.resize(n);
	return out;
}

MpaIn Conn::read_mpa(double timeout)
{
	MpaIn m;
	auto end = deadline(timeout);

	for (;;) {
		const uint8_t *p = in_.data() + in_off_;
		size_t have = in_.size() - in_off_;
		size_t need = xiw_mpa_frame_need(p, have);

		if (have >= need) {
			size_t used = 0;
			m.err = xiw_mpa_frame_parse(p, have, &m.frame, &used);
			if (m.err) {
				m.result = MpaResult::Malformed;
				m.raw.assign(p, p + need);
				return m;
			}
			m.raw.assign(p, p + used);
			if (m.frame.pdata_len)
				m.pdata.assign(m.frame.pdata, m.frame.pdata + m.frame.pdata_len);
			m.frame.pdata = nullptr;
			in_off_ += used;
			m.result = MpaResult::Frame;
			return m;
		}
		if (eof_) {
			m.result = have ? MpaResult::Malformed : MpaResult::Closed;
			m.raw.assign(p, p + have);
			return m;
		}
		int left = ms_left(end);
		if (!left) {
			m.result = MpaResult::Timeout;
			return m;
		}
		fill(left / 1000.0);
	}
}

void Conn::start_fpdus(bool c, bool mtx, bool mrx)
{
	crc = c;
	markers_tx = mtx;
	markers_rx = mrx;
	xiw_tx_init(&tx_, crc, markers_tx, 0);
	xiw_rx_init(&rx_, crc, markers_rx, 0, 0);
	fpdu_mode_ = true;
	deframe();
}

Bytes header(const SegSpec &s)
{
	uint8_t hb[XIW_RDMAP_HDR_MAX];
	size_t hl;
	xiw_proto_err e = xiw_rdmap_hdr_build(&s.hdr, hb, sizeof(hb), &hl);

	if (e)
		throw Failure(std::string("cannot build header: ") + xiw_proto_err_name(e));
	Bytes hdr(hb, hb + hl);
	if (s.ddp_ctrl >= 0)
		hdr[DDP_CTRL_OFF] = uint8_t(s.ddp_ctrl);
	if (s.rdmap_ctrl >= 0)
		hdr[DDP_RSVDULP_OFF] = uint8_t(s.rdmap_ctrl);
	return hdr;
}

Bytes Conn::frame(const SegSpec &s)
{
	Bytes hdr = header(s);

	Bytes out;
	if (s.ulpdu_len >= 0) {
		// A forged length: framed by hand, CRC over what is sent.
		if (markers_tx)
			throw Failure("a forged ULPDU_Length needs markers off");
		out.resize(MPA_HDR_LEN);
		xiw_put_be16(out.data(), uint16_t(s.ulpdu_len));
		out.insert(out.end(), hdr.begin(), hdr.end());
		out.insert(out.end(), s.payload.begin(), s.payload.end());
		while (out.size() % MPA_ALIGN)
			out.push_back(0);
		uint8_t c[MPA_CRC_LEN] = {};
		if (crc)
			xiw_crc_put(xiw_crc_update(XIW_CRC_SEED, out.data(), out.size()), c);
		out.insert(out.end(), c, c + MPA_CRC_LEN);
		tx_.stream_pos += uint32_t(out.size());
	} else {
		xiw_slice sl[2] = { { hdr.data(), hdr.size() },
				    { s.payload.data(), s.payload.size() } };
		size_t total = hdr.size() + s.payload.size();
		if (total > MPA_MAX_ULPDU)
			throw Failure("segment larger than an FPDU can carry");
		out.resize(xiw_mpa_fpdu_len(tx_.stream_pos, markers_tx, uint32_t(total)));
		size_t n;
		xiw_proto_err e = xiw_fpdu_build(&tx_, sl, 2, out.data(), out.size(), &n);
		if (e)
			throw Failure(std::string("cannot frame: ") + xiw_proto_err_name(e));
		out.resize(n);
	}
	if (s.bad_crc)
		out.back() ^= 0xff;
	return out;
}

bool Conn::send(const SegSpec &s)
{
	return write(frame(s), s.bytewise);
}

void Conn::deframe()
{
	if (!fpdu_mode_)
		return;
	while (in_off_ < in_.size() && rx_err_ == XIW_OK) {
		size_t used = 0;
		xiw_rx_event ev = {};
		xiw_proto_err e = xiw_rx_step(&rx_, in_.data() + in_off_, in_.size() - in_off_,
					      &used, &ev);

		in_off_ += used;
		if (e) {
			rx_err_ = e;
			break;
		}
		switch (ev.type) {
		case XIW_RX_EV_HDR:
			cur_.emplace();
			cur_->hdr = rx_.hdr;
			cur_->raw_hdr.assign(rx_.raw + MPA_HDR_LEN, rx_.raw + rx_.raw_got);
			cur_->ulpdu_len = rx_.ulpdu_len;
			break;
		case XIW_RX_EV_DATA:
			if (cur_)
				cur_->payload.insert(cur_->payload.end(), ev.data, ev.data + ev.len);
			break;
		case XIW_RX_EV_END:
			if (cur_)
				segs_.push_back(std::move(*cur_));
			cur_.reset();
			break;
		default:
			break;
		}
		if (!used && ev.type == XIW_RX_EV_NONE)
			break;
	}
}

std::optional<Segment> Conn::recv(double timeout)
{
	auto end = deadline(timeout);

	for (;;) {
		if (!segs_.empty()) {
			Segment s = std::move(segs_.front());
			segs_.pop_front();
			return s;
		}
		if (eof_ || rx_err_)
			return std::nullopt;
		int left = ms_left(end);
		if (!left)
			return std::nullopt;
		if (fill(left / 1000.0))
			deframe();
	}
}

bool Conn::wait_closed(double timeout)
{
	auto end = deadline(timeout);

	while (!eof_) {
		int left = ms_left(end);
		if (!left)
			return false;
		fill(left / 1000.0);
		in_.clear();
		in_off_ = 0;
	}
	return true;
}

} // namespace xiw::peer
